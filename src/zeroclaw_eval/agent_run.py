"""The agent side of a run: which agent, how many cases at once, the bridge, the sessions.

:func:`select_agent` turns ``[eval].agent`` (a name) or ``[eval.agent]`` (a table)
into the agent under test. The runner then asks :func:`workers` how many cases run
at once, starts one loopback model bridge for the whole run when the agent needs
it (:func:`model_bridge`), and keeps each running case's session in
:class:`OpenSessions`, so that a case abandoned at its time limit, or cut short
by an interruption, can be closed from another thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from zeroclaw_eval.config import AgentTable, EvalConfig
from zeroclaw_eval.errors import ConfigError, ZeroclawEvalError
from zeroclaw_eval.mode import RunMode
from zeroclaw_eval.registry import Registry
from zeroclaw_eval.under_test import AgentSession, AgentUnderTest

if TYPE_CHECKING:
    from zeroclaw_eval.bridge import ModelBridge


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
        from zeroclaw_eval.bridged import attached_agent

        return attached_agent(setting, base_dir or Path.cwd(), name_of)
    entry = registry.agents.get(setting)
    if entry is None:
        known = ", ".join(sorted(registry.agents)) or "none"
        raise ConfigError(f"{name_of('agent')}={setting!r}: unknown agent (known agents: {known})")
    return entry.obj


def workers(mode: RunMode, agent: AgentUnderTest, config: EvalConfig) -> int:
    """How many cases run at once: the mode's number, unless the agent asks for its own.

    Replay's one-at-a-time is no limit of its own (the reference loop is CPU-bound),
    so there the agent's number stands; any other mode still bounds it (``live``
    protects its endpoint).
    """
    allowed = mode.concurrency(config)
    wanted = agent.concurrency(config)
    if wanted is None:
        return allowed
    return wanted if mode.name == "replay" else min(wanted, allowed)


class OpenSessions:
    """The agent sessions of the cases running now, so that another thread can close one.

    A Python thread cannot be stopped, but the session it waits on can: closing a
    command agent's session kills its process group, which ends the wait.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, list[AgentSession]] = {}

    def add(self, index: int, session: AgentSession) -> None:
        with self._lock:
            self._open.setdefault(index, []).append(session)

    def forget(self, index: int) -> None:
        """Case ``index`` ended and closed its own sessions."""
        with self._lock:
            self._open.pop(index, None)

    def close(self, index: int) -> bool:
        """Close the sessions of case ``index``; whether it had any open."""
        with self._lock:
            sessions = self._open.pop(index, [])
        for session in sessions:
            _close_quietly(session)
        return bool(sessions)

    def close_all(self) -> None:
        with self._lock:
            sessions = [session for listed in self._open.values() for session in listed]
            self._open.clear()
        for session in sessions:
            _close_quietly(session)


def _close_quietly(session: AgentSession) -> None:
    with suppress(Exception):  # the case is already abandoned, and reported as such
        session.close()


@contextmanager
def model_bridge(needed: bool) -> Iterator[ModelBridge | None]:
    """The run's loopback model bridge when ``needed``, stopped on every way out."""
    if not needed:
        yield None
        return
    from zeroclaw_eval.bridge import ModelBridge

    bridge = ModelBridge()
    try:
        try:
            bridge.start()
        except OSError as exc:
            raise ZeroclawEvalError(
                f"the model bridge could not start on 127.0.0.1: {exc.strerror or exc}"
            ) from None
        yield bridge
    finally:
        bridge.close()
