"""Every ``zeroclaw_eval_*`` hook, typed and documented.

Plugins implement these with :data:`hookimpl` (``from zeroclaw_eval import hookimpl``).
Each hook is called once per plugin manager, when the
:class:`~zeroclaw_eval.plugins.registry.Registry` is built: before any fixture is loaded.
Each receives a ``register`` callable and calls it once per object it provides;
results are not combined by return value. The registry attributes every object to
the plugin that registered it, and two plugins registering the same name is an
error that names both. As pluggy allows, an implementation may accept fewer
arguments than the specification; signatures here only ever grow. A hook
wrapper (``wrapper=True``, ``hookwrapper=True``) has nothing to wrap in a
registration hook and is refused with a
:class:`~zeroclaw_eval.errors.PluginLoadError`, never skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from pydantic import BaseModel

    from zeroclaw_eval.agents.base import AgentUnderTest
    from zeroclaw_eval.agents.dialect import Dialect
    from zeroclaw_eval.grading.family import Family
    from zeroclaw_eval.modes.base import RunMode
    from zeroclaw_eval.protocol import Tool
    from zeroclaw_eval.report.formatter import Formatter

PROJECT_NAME = "zeroclaw_eval"
"""The pluggy project name, and the entry-point group plugins are found in."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def zeroclaw_eval_register_families(register: Callable[[Family[object]], None]) -> None:
    """Register expectation families: call ``register(family)`` for each.

    ``family`` is a :class:`~zeroclaw_eval.grading.family.Family` instance; its ``name`` is
    the key fixtures use in ``expects``. Every registered family goes through the
    same admission as the built-ins.
    """


@hookspec
def zeroclaw_eval_register_formatters(register: Callable[[Formatter], None]) -> None:
    """Register report formatters: call ``register(formatter)`` for each.

    ``formatter`` is a :class:`~zeroclaw_eval.report.formatter.Formatter` instance; its
    ``name`` is what ``--format`` selects.
    """


@hookspec
def zeroclaw_eval_register_modes(register: Callable[[RunMode], None]) -> None:
    """Register run modes: call ``register(mode)`` for each.

    ``mode`` is a :class:`~zeroclaw_eval.modes.base.RunMode` instance; its ``name`` is
    what ``--mode`` and ``[eval].mode`` select.
    """


@hookspec
def zeroclaw_eval_register_tools(register: Callable[[str, Callable[[], Tool]], None]) -> None:
    """Register tools the agent can dispatch to: call ``register(name, factory)`` for each.

    ``factory`` takes no arguments and returns a fresh
    :class:`~zeroclaw_eval.protocol.Tool`; it is called once per case, so tool state
    never leaks between cases. ``name`` must equal the tool's ``name``. A tool that
    needs files works in :func:`zeroclaw_eval.case_workspace`, the running case's
    private directory (made on first use, removed when the case ends).
    """


@hookspec
def zeroclaw_eval_register_agents(register: Callable[[AgentUnderTest], None]) -> None:
    """Register agents the harness can put under test: call ``register(agent)`` for each.

    ``agent`` is a :class:`~zeroclaw_eval.agents.base.AgentUnderTest` instance; its
    ``name`` is what ``--agent`` and ``[eval].agent`` select (default ``reference``,
    the built-in loop). Its ``start(side)`` makes a fresh session per case attempt
    that meets only the model side, never the fixture; its ``cannot_certify``
    families are refused at admission when it is the agent under test.
    """


@hookspec
def zeroclaw_eval_register_dialects(register: Callable[[Dialect], None]) -> None:
    """Register how agent stacks talk to their model: call ``register(dialect)`` for each.

    ``dialect`` is a :class:`~zeroclaw_eval.agents.dialect.Dialect`, declared data:
    where the stack shows the model a tool's result, what an honest framework adds
    around it, how it gives its answer. Its ``name`` is what ``[eval.agent] dialect``
    selects (default ``chat``); the harness reads a bridged agent's calls and results
    from the wire, and pairs them with what it dispatched over MCP, the way the
    dialect says.
    """


@hookspec
def zeroclaw_eval_register_settings(
    register: Callable[[type[BaseModel], Callable[[BaseModel], None]], None],
) -> None:
    """Declare this plugin's settings: call ``register(model, configure)`` once.

    ``model`` is a pydantic model class: the plugin's own table of the configuration,
    ``[eval.plugins.NAME]`` (``NAME`` the plugin's name, as ``zeroclaw eval plugins``
    lists it), is validated against it when a run opens, as strictly as ``[eval]``
    (give the model ``extra="forbid"`` to refuse unknown keys), and an error names the
    file and the key. ``configure(settings)`` is then called once with the validated
    model (its defaults when the table is absent), before anything runs: the table
    reaches that plugin only.
    """
