"""The agent side of a run: how many cases at once, the model bridge, the open sessions.

The runner asks :func:`workers` how many cases run at once, starts one loopback
model bridge for the whole run when the agent needs it (:func:`model_bridge`),
and one MCP tool server when it takes its tools from the harness (:func:`tool_server`),
and keeps each running case's session in :class:`OpenSessions`, so that a case
abandoned at its time limit, or cut short by an interruption, can be closed from
another thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from zeroclaw_eval.agents.base import AgentSession, AgentUnderTest
from zeroclaw_eval.config import EvalConfig
from zeroclaw_eval.errors import ZeroclawEvalError
from zeroclaw_eval.modes.base import RunMode

if TYPE_CHECKING:
    from zeroclaw_eval.agents.base import RouteOpener, ToolRouteOpener
    from zeroclaw_eval.util.loopback import RoutedServer


def workers(mode: RunMode, agent: AgentUnderTest, config: EvalConfig) -> int:
    """How many cases run at once: the mode's number, unless the agent asks for its own.

    A mode that replays scripts sets no limit of its own (its one-at-a-time only
    says the reference loop is CPU-bound), so there the agent's number stands; any
    other mode still bounds it (``live`` protects its endpoint).
    """
    allowed = mode.concurrency(config)
    wanted = agent.concurrency(config)
    if wanted is None:
        return allowed
    return wanted if mode.replays_scripts else min(wanted, allowed)


class Closable(Protocol):
    """What a running case holds open: an agent session, a team's own MCP server."""

    def close(self) -> None: ...

    def diagnostics(self) -> str: ...


class OpenSessions:
    """The agent sessions (and a team's MCP servers) of the cases running now, so that
    another thread can close one.

    A Python thread cannot be stopped, but the session it waits on can: closing a
    command agent's session kills its process group, which ends the wait.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, list[Closable]] = {}

    def add(self, index: int, session: Closable) -> None:
        with self._lock:
            self._open.setdefault(index, []).append(session)

    def forget(self, index: int) -> None:
        """Case ``index`` ended and closed its own sessions."""
        with self._lock:
            self._open.pop(index, None)

    def diagnostics(self, index: int) -> list[str]:
        """What the open sessions of case ``index`` can say about where they are stuck."""
        with self._lock:
            sessions = list(self._open.get(index, []))
        notes = []
        for session in sessions:
            with suppress(Exception):  # a note is a courtesy: it never hides the timeout
                if note := session.diagnostics():
                    notes.append(note)
        return notes

    def close(self, index: int) -> bool:
        """Close what case ``index`` holds open; whether it had an agent session open."""
        with self._lock:
            sessions = self._open.pop(index, [])
        for session in sessions:
            _close_quietly(session)
        return any(isinstance(session, AgentSession) for session in sessions)

    def close_all(self) -> None:
        with self._lock:
            sessions = [session for listed in self._open.values() for session in listed]
            self._open.clear()
        for session in sessions:
            _close_quietly(session)


def _close_quietly(session: Closable) -> None:
    with suppress(Exception):  # the case is already abandoned, and reported as such
        session.close()


@contextmanager
def model_bridge(needed: bool) -> Iterator[RouteOpener | None]:
    """The run's loopback model bridge when ``needed``, stopped on every way out.

    What is yielded opens routes of it, as agents are handed it
    (:attr:`~zeroclaw_eval.agents.base.ModelSide.bridge`): not the server itself.
    """
    if not needed:
        yield None
        return
    from zeroclaw_eval.bridge.server import ModelBridge

    with _running(ModelBridge()) as bridge:
        yield bridge.routes()


@contextmanager
def tool_server(needed: bool) -> Iterator[ToolRouteOpener | None]:
    """The run's loopback MCP tool server when ``needed``, stopped on every way out.

    What is yielded opens routes of it
    (:attr:`~zeroclaw_eval.agents.base.ModelSide.tool_server`): not the server itself.
    """
    if not needed:
        yield None
        return
    from zeroclaw_eval.toolserver.server import ToolServer

    with _running(ToolServer()) as server:
        yield server.routes()


Server = TypeVar("Server", bound="RoutedServer[Any]")


@contextmanager
def _running(server: Server) -> Iterator[Server]:
    """``server`` started, and closed on every way out; a port it cannot bind is one line."""
    try:
        try:
            server.start()
        except OSError as exc:
            raise ZeroclawEvalError(
                f"{server.what} could not start on 127.0.0.1: {exc.strerror or exc}"
            ) from None
        yield server
    finally:
        server.close()
