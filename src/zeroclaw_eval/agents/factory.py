"""A team's Python agent, in-process: ``[eval.agent] factory = "module:callable"``.

Per case attempt, on the case's worker thread, the harness calls
``factory(base_url=..., api_key=..., workspace=...)`` with the case's bridge route
and workspace (and ``mcp_url=...``, the case's MCP endpoint, when
``[eval.agent] tools = "served"``), and gets an object with ``run_turn(user_input) -> str`` (the
turn's final text) and optionally ``close()``. History across turns belongs to
that object. Its model calls go to the bridge like any client's: the agent is
unmodified.

When a report traces the run (``--report otel:...``), the case attempt's span is
OpenTelemetry's current context while the factory runs and during each turn
(:mod:`zeroclaw_eval.agents.tracecontext`), so that the agent's own spans join the
run's trace.

The module is imported when the run starts, with the configuration file's
directory first on ``sys.path``: a module that does not import, or a name that
is not a callable, is a configuration error before any case runs.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from zeroclaw_eval.agents.base import ModelSide
from zeroclaw_eval.agents.bridged import BridgedAgent, BridgedSession
from zeroclaw_eval.agents.command import upstream_of
from zeroclaw_eval.agents.dialect import CHAT, Dialect
from zeroclaw_eval.agents.tracecontext import attached
from zeroclaw_eval.config import AgentTable, EvalConfig
from zeroclaw_eval.errors import ConfigError, RunError
from zeroclaw_eval.workspace import case_workspace


class FactoryAgent(BridgedAgent):
    """A Python agent made by ``factory`` for each case, reached through the bridge."""

    name = "factory"
    description = "a Python agent made in-process by [eval.agent] factory"

    def __init__(
        self, table: AgentTable, base_dir: Path, field: str, dialect: Dialect = CHAT
    ) -> None:
        super().__init__(table, dialect)
        assert table.factory is not None
        self.spec = table.factory
        self.base_dir = base_dir
        self.mcp_upstream = upstream_of(table, base_dir)
        self.mcp_upstream_timeout_s = table.mcp_upstream_timeout_s
        self.field = field
        self._factory: Callable[..., Any] | None = None
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        return f"factory {self.spec}"

    def check_config(self, config: EvalConfig) -> None:
        self.factory()

    def factory(self) -> Callable[..., Any]:
        """The callable ``spec`` names, imported once. Raises :class:`ConfigError`."""
        with self._lock:
            if self._factory is None:
                self._factory = self._import()
            return self._factory

    def _import(self) -> Callable[..., Any]:
        module_name, _, attribute = self.spec.partition(":")
        where = f"{self.field}={self.spec!r}"
        directory = str(self.base_dir.resolve())
        if directory not in sys.path:
            sys.path.insert(0, directory)
        try:
            module = importlib.import_module(module_name.strip())
        except BaseException as exc:  # SyntaxError, SystemExit: still one line, no traceback
            raise ConfigError(
                f"{where}: cannot import module {module_name!r}: {type(exc).__name__}: {exc}"
            ) from None
        target: Any = module
        for part in attribute.strip().split("."):
            target = getattr(target, part, None)
            if target is None:
                raise ConfigError(f"{where}: module {module_name!r} has no {attribute!r}")
        if not callable(target):
            raise ConfigError(f"{where}: {attribute!r} is {type(target).__name__}, not callable")
        return target  # type: ignore[no-any-return]

    def start(self, side: ModelSide) -> FactorySession:
        return FactorySession(side, self)


class FactorySession(BridgedSession):
    """One object made by the factory, for one case attempt."""

    def __init__(self, side: ModelSide, agent: FactoryAgent) -> None:
        super().__init__(side, serve_tools=agent.serves_tools, dialect=agent.dialect)
        self._spec = agent.spec
        # The agent shares the harness's environment, the provider's key included:
        # whatever it raises is quoted without the key.
        self._secrets = side.secrets
        self._owner = threading.current_thread()
        self._closed_agent = False
        self._traceparent = side.traceparent
        served = {"mcp_url": self.mcp_url} if self.mcp_url is not None else {}
        try:
            with attached(self._traceparent):
                self.agent = agent.factory()(
                    base_url=self.route.base_url,
                    api_key=self.route.api_key,
                    workspace=case_workspace(),
                    **served,
                )
        except ConfigError as exc:
            self._close_routes()
            raise RunError(str(exc)) from None
        except Exception as exc:  # the team's code: its failure fails this case only
            self._close_routes()
            raise RunError(
                self._secrets.text(
                    f"the agent factory {self._spec} raised {type(exc).__name__}: {exc}"
                )
            ) from None
        if not callable(getattr(self.agent, "run_turn", None)):
            self._close_routes()
            raise RunError(
                f"the agent factory {self._spec} returned {type(self.agent).__name__}, "
                "which has no run_turn(user_input) method"
            )

    def exchange_turn(self, turn: int, user_input: str) -> str:
        try:
            with attached(self._traceparent):
                text = self.agent.run_turn(user_input)
        except Exception as exc:
            raise RunError(
                self._secrets.text(f"turn {turn}: the agent raised {type(exc).__name__}: {exc}")
            ) from None
        if not isinstance(text, str):
            raise RunError(
                f"turn {turn}: the agent's run_turn returned {type(text).__name__}, not text"
            )
        return text

    def finish(self) -> None:
        self._closed_agent = True
        close = getattr(self.agent, "close", None)
        if callable(close):
            try:
                close()
            except Exception as exc:
                raise RunError(
                    self._secrets.text(f"the agent's close() raised {type(exc).__name__}: {exc}")
                ) from None

    def release(self) -> None:
        # A Python thread cannot be stopped, nor its object safely closed from another
        # thread: there, the closed route makes the agent's next model call fail at
        # once, which ends an abandoned turn.
        if self._closed_agent or threading.current_thread() is not self._owner:
            return
        self._closed_agent = True
        close = getattr(self.agent, "close", None)
        if callable(close):
            with suppress(Exception):  # the case already failed; this is cleanup
                close()
