"""Each case's workspace: a private directory for tools that touch files.

One fresh agent and one fresh workspace per case, so nothing a tool writes can
leak into the next case. The directory is created on first use (a replay case
whose tools never ask costs nothing) and removed when the case ends.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path


class Workspace:
    """A directory made on first use and removed by :meth:`remove`."""

    def __init__(self) -> None:
        self._path: Path | None = None

    @property
    def path(self) -> Path:
        """The directory, created on first access."""
        if self._path is None:
            self._path = Path(tempfile.mkdtemp(prefix="zeroclaw-eval-case-"))
        return self._path

    def remove(self) -> None:
        """Delete the directory and everything in it, if it was ever made."""
        if self._path is not None:
            shutil.rmtree(self._path, ignore_errors=True)
            self._path = None


_current: ContextVar[Workspace | None] = ContextVar("zeroclaw_eval_workspace", default=None)


def case_workspace() -> Path:
    """The running case's private directory, for a tool to read and write in.

    Raises :class:`RuntimeError` when no case is running on this thread.
    """
    workspace = _current.get()
    if workspace is None:
        raise RuntimeError("case_workspace() is only available while a case runs")
    return workspace.path


@contextmanager
def fresh_workspace() -> Iterator[Workspace]:
    """Give the code run inside a new workspace, removed when it ends."""
    workspace = Workspace()
    token = _current.set(workspace)
    try:
        yield workspace
    finally:
        _current.reset(token)
        workspace.remove()


def current_workspace() -> Workspace | None:
    """The running case's workspace on this thread, ``None`` outside a case: what code
    that runs the case's tools on another thread (the MCP tool server's) carries there."""
    return _current.get()


@contextmanager
def entered(workspace: Workspace | None) -> Iterator[None]:
    """Run the code inside ``workspace``, a case's carried from its own thread (it is
    not removed here: the case's :func:`fresh_workspace` does that)."""
    token = _current.set(workspace)
    try:
        yield
    finally:
        _current.reset(token)
