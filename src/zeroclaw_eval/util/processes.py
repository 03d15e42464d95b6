"""Processes started for one purpose, and every process they start, ended together.

A process started in a process group of its own is killed whole with
``killpg``, except for what left the group: a daemon that called ``setsid``, then
forked again so that its parent could exit. Such an orphan is handed to the
nearest *child subreaper* above it, or else to ``init``, and a process-group kill
never reaches it. So, on Linux:

- :func:`adopt_orphans` makes this process a child subreaper
  (``prctl(PR_SET_CHILD_SUBREAPER)``): an orphan of anything it started is
  re-parented to it instead of to ``init``, and stays among its descendants;
- a :class:`Mark` is carried by each process started for one purpose (one case
  attempt): a token in its environment (:data:`MARK_ENV`), which every process it
  starts inherits, and the process group and session it leads;
- :meth:`Mark.sweep` walks this process's descendants (``/proc``) and kills every
  one that carries the mark, belongs to the group or session of a process the
  mark leads, or descends from one that does; the orphans it kills are reaped.
  Processes of another mark (another case running beside it) are never touched.

Kills go through a pidfd where the system has them, so a process id reused
between the walk and the kill never kills a stranger.

Limits: without a child subreaper (not Linux, or ``prctl`` refused) a sweep only
sees descendants still attached to this process, so an orphan that left the
group outlives its purpose; and a process that leaves the group *and* clears the
mark from its environment *and* is orphaned is no longer told apart from any
other child of this process, so it is not killed either.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

#: The variable carrying a :class:`Mark`'s token into every process it marks.
MARK_ENV = "ZEROCLAW_EVAL_CASE"

#: How many times a sweep walks the tree again after killing: a process forked while
#: it walked, or re-parented by a kill, is found the next time.
MAX_PASSES = 8

#: How long a sweep waits for one orphan it killed to be reaped.
REAP_WAIT_S = 2.0

_PR_SET_CHILD_SUBREAPER = 36
_adopting: bool | None = None
_adopting_lock = threading.Lock()


def adopt_orphans() -> bool:
    """Make this process a child subreaper, once (Linux); whether it is one.

    From then on, an orphan of any process this one started is re-parented to it
    rather than to ``init``: :meth:`Mark.sweep` can find it. The setting lasts for
    the life of the process (a pytest session too); orphans a sweep does not kill
    are left as they are, and reaped by nothing until this process exits.
    """
    global _adopting
    with _adopting_lock:
        if _adopting is None:
            _adopting = _set_subreaper()
        return _adopting


def _set_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class ProcessInfo:
    """What ``/proc/PID/stat`` says of a process: its parent, group, session, state,
    and when it started (which tells it from a later process given the same id)."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    started: int


def process_info(pid: int) -> ProcessInfo | None:
    """``pid``'s entry in ``/proc``, or ``None`` when it is gone (or not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp session ... starttime": comm may hold spaces and
    # parentheses; starttime is the 22nd field, the 20th after comm.
    fields = text[text.rfind(b")") + 2 :].split()
    try:
        return ProcessInfo(
            pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode(), int(fields[19])
        )
    except (IndexError, ValueError):
        return None


def children(pid: int) -> list[int]:
    """The children of ``pid`` (every thread's), from ``/proc``; empty when unknown."""
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as listed:
                found.extend(int(child) for child in listed.read().split())
        except (OSError, ValueError):
            continue
    return found


def environment_holds(pid: int, entry: bytes) -> bool:
    """Whether ``pid``'s environment (as it was exec'd) holds ``entry`` (``NAME=value``)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return entry in environ.read().split(b"\0")
    except OSError:
        return False


class Mark:
    """The processes of one case attempt: marked in their environment, led by the
    processes :meth:`lead` names, and swept together (:meth:`sweep`)."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(12)
        self._entry = f"{MARK_ENV}={self.token}".encode()
        self._leaders: dict[int, int] = {}  # pid -> when it started
        self._lock = threading.Lock()

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """``environ`` with the mark: what a marked process is started with."""
        return {**environ, MARK_ENV: self.token}

    def lead(self, pid: int) -> None:
        """``pid``, a child of this process not yet waited for, was started with the
        mark, in a process group and session of its own."""
        info = process_info(pid)
        if info is not None:
            with self._lock:
                self._leaders[pid] = info.started

    def holds(self, info: ProcessInfo) -> bool:
        """Whether the process ``info`` describes is one of this mark's by itself (not
        by its ancestors): a leader, in a leader's group or session, or marked."""
        for led in {info.pid, info.pgid, info.sid}:
            if self._leads(led):
                return True
        return info.state != "Z" and environment_holds(info.pid, self._entry)

    def _leads(self, pid: int) -> bool:
        """Whether the group or session numbered ``pid`` is a leader's of this mark.

        A number is reused only once nothing refers to it: while a group or session
        of it exists, the process at ``pid`` is its leader, or no process at all."""
        with self._lock:
            started = self._leaders.get(pid)
        if started is None:
            return False
        now = process_info(pid)
        return now is None or now.started == started

    def members(self, root: int | None = None) -> Iterator[ProcessInfo]:
        """The descendants of ``root`` (default: this process) that are this mark's:
        held by it, or descending from one that is."""
        stack = [(child, False) for child in children(os.getpid() if root is None else root)]
        while stack:
            pid, inherited = stack.pop()
            info = process_info(pid)
            if info is None:
                continue
            member = inherited or self.holds(info)
            if member:
                yield info
            stack.extend((child, member) for child in children(pid))

    def sweep(self) -> int:
        """Kill every process of this mark still alive, and reap the orphans among
        them (a leader is left to whoever started it); how many were killed."""
        me = os.getpid()
        with self._lock:
            leaders = set(self._leaders)
        killed = 0
        for _ in range(MAX_PASSES):
            found = list(self.members())
            alive = [info for info in found if info.state != "Z"]
            for info in alive:
                killed += _kill(info)
            for info in found:
                if info.ppid == me and info.pid not in leaders:
                    _reap(info.pid)
            if not alive:
                break
        return killed


def _kill(info: ProcessInfo) -> int:
    """SIGKILL the process ``info`` describes, through a pidfd when there is one,
    checked after it is opened: an id reused since the walk is never killed."""
    try:
        handle = os.pidfd_open(info.pid)
    except (AttributeError, OSError):
        handle = None
    try:
        now = process_info(info.pid)
        if now is None or now.started != info.started:
            return 0  # gone, or another process now
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if handle is not None:
                signal.pidfd_send_signal(handle, signal.SIGKILL)
            else:
                os.kill(info.pid, signal.SIGKILL)
            return 1
        return 0
    finally:
        if handle is not None:
            os.close(handle)


def _reap(pid: int) -> None:
    """Wait for ``pid``, a child of this process, for at most :data:`REAP_WAIT_S`."""
    deadline = time.monotonic() + REAP_WAIT_S
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() > deadline:
            return
        time.sleep(0.005)
