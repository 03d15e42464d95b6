"""Which agent is under test: ``[eval] agent = "NAME"``, or an ``[eval.agent]`` table.

A name selects a registered agent (default ``reference``, the built-in loop); a
table attaches a team's own agent through the model bridge, as a Python factory
(:mod:`zeroclaw_eval.agents.factory`) or a command (:mod:`zeroclaw_eval.agents.command`),
each imported only when a table names it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from zeroclaw_eval.agents.dialect import CHAT, Dialect
from zeroclaw_eval.config import AgentTable
from zeroclaw_eval.errors import ConfigError

if TYPE_CHECKING:
    from zeroclaw_eval.agents.base import AgentUnderTest
    from zeroclaw_eval.agents.bridged import BridgedAgent
    from zeroclaw_eval.plugins.registry import Registry


def select_agent(
    registry: Registry,
    setting: str | AgentTable,
    *,
    base_dir: Path | None = None,
    field: Callable[[str], str] | None = None,
) -> AgentUnderTest:
    """The agent under test that ``[eval].agent`` names, or that ``[eval.agent]`` attaches.

    A name must be a registered agent; a table attaches a team's own agent through
    the model bridge, its relative paths taken from ``base_dir`` (default: the
    working directory). ``field(key)`` names a configuration key in messages.
    Raises :class:`ConfigError` listing the known agents.
    """
    name_of = field if field is not None else (lambda key: f"eval.{key}")
    if isinstance(setting, AgentTable):
        dialect = registry.dialects.get(setting.dialect)
        if dialect is None:
            known = ", ".join(sorted(registry.dialects)) or "none"
            raise ConfigError(
                f"{name_of('agent.dialect')}={setting.dialect!r}: unknown dialect "
                f"(known dialects: {known})"
            )
        return attached_agent(setting, base_dir or Path.cwd(), name_of, dialect.obj)
    entry = registry.agents.get(setting)
    if entry is None:
        known = ", ".join(sorted(registry.agents)) or "none"
        raise ConfigError(f"{name_of('agent')}={setting!r}: unknown agent (known agents: {known})")
    return entry.obj


def attached_agent(
    table: AgentTable,
    base_dir: Path,
    field_name: Callable[[str], str],
    dialect: Dialect = CHAT,
) -> BridgedAgent:
    """The agent an ``[eval.agent]`` table attaches, talking ``dialect``; relative paths
    from ``base_dir``."""
    if table.factory is not None:
        from zeroclaw_eval.agents.factory import FactoryAgent

        return FactoryAgent(table, base_dir, field_name("agent.factory"), dialect)
    from zeroclaw_eval.agents.command import CommandAgent

    assert table.command is not None  # the table validates that one of the two is given
    return CommandAgent(table, base_dir, field_name("agent.command"), dialect)
