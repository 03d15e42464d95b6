"""Where a run is recorded in the history, and the recorder that does it.

A run opens its history before any case runs (a corrupt, newer or unwritable
history fails fast, naming the file) and appends itself once its report is out.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zeroclaw_eval.config import LoadedConfig
    from zeroclaw_eval.history.provenance import GitState
    from zeroclaw_eval.history.store import History
    from zeroclaw_eval.plugins.manager import PluginManager
    from zeroclaw_eval.report.model import SuiteReport

NO_HISTORY_ENV = "ZEROCLAW_EVAL_NO_HISTORY"
"""Set to ``1``, ``zeroclaw eval run`` keeps no history unless ``--history`` asks for one
(the project's own tests set it, so that they never write into the repository)."""


def history_path(loaded: LoadedConfig, flag: Path | None) -> Path:
    """``--history``, else ``[eval] history`` (relative to its file), else
    ``.zeroclaw/history.sqlite`` beside the configuration file (or in the working
    directory when there is none)."""
    from zeroclaw_eval.history.store import DEFAULT_HISTORY

    if flag is not None:
        return flag
    configured = loaded.config.history
    if configured is not None:
        return loaded.base_dir / configured
    return loaded.base_dir / DEFAULT_HISTORY


class RunRecorder:
    """Records one ``run`` in its history (``history`` is ``None`` with ``--no-history``).

    The history is opened and checked before any case runs, so that a bad one
    fails fast, and the same connection appends the run once its report is out.
    ``git status`` runs meanwhile, in the background (:class:`GitState`). Use it
    as a context manager, or :meth:`close` it: whatever way the run ends, the
    connection is closed and git is reaped.
    """

    def __init__(self, history: History | None, directory: Path, suite: str) -> None:
        self.history = history
        self.directory = directory
        self.suite = suite
        self.started_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self._started = time.perf_counter()
        self._git: GitState | None = None
        if history is not None:
            from zeroclaw_eval.history.provenance import GitState

            self._git = GitState(directory)

    @property
    def path(self) -> Path | None:
        """The history file, or ``None`` with ``--no-history``."""
        return self.history.path if self.history is not None else None

    def append(self, report: SuiteReport, pm: PluginManager | None) -> None:
        """Record the run; nothing happens with ``--no-history``, or for a suite that
        ran no case. Raises :class:`~zeroclaw_eval.errors.HistoryError`."""
        if self.history is None or not report.cases:
            return
        from zeroclaw_eval.history.provenance import plugin_versions
        from zeroclaw_eval.history.store import RunInfo

        commit, dirty = self._git.result() if self._git is not None else (None, None)
        info = RunInfo(
            started_at=self.started_at,
            suite=self.suite,
            duration_s=time.perf_counter() - self._started,
            agent=report.agent,
            plugins=plugin_versions(pm) if pm is not None else (),
            git_commit=commit,
            git_dirty=dirty,
        )
        self.history.append(report, info)

    def durations(self, mode: str, least_cases: int) -> dict[str, float]:
        """The recorded median duration of each case of this suite in ``mode``, from
        runs of at least ``least_cases`` cases (see
        :meth:`~zeroclaw_eval.history.store.History.case_durations`); empty with
        ``--no-history``, or when the history holds no such run."""
        if self.history is None:
            return {}
        return self.history.case_durations(self.suite, mode, least_cases)

    def close(self) -> None:
        """Close the history and stop git if it still runs. Idempotent."""
        if self._git is not None:
            self._git.close()
        if self.history is not None:
            self.history.close()

    def __enter__(self) -> RunRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def filed_under(directory: Path, paths: Sequence[Path], label: str) -> str:
    """The suite a run is filed under in the history: a suite directory by its
    absolute path (the same suite, from wherever it ran), fixtures named on the
    command line by ``label``, the suite name the report gives them."""
    if not paths:
        return str(directory.resolve())
    if len(paths) == 1 and paths[0].is_dir():
        return str(paths[0].resolve())
    return label


def open_run_history(
    loaded: LoadedConfig, flag: Path | None, disabled: bool, directory: Path, suite: str
) -> RunRecorder:
    """The recorder for a ``run`` in ``directory`` filed under ``suite``
    (:func:`filed_under`), its history created (or migrated) and checked now.

    Raises :class:`~zeroclaw_eval.errors.HistoryError` naming the file when the
    history is corrupt, from a newer schema, or cannot be written.
    """
    if disabled or (flag is None and os.environ.get(NO_HISTORY_ENV, "") not in ("", "0")):
        return RunRecorder(None, directory, suite)
    from zeroclaw_eval.history.store import open_history

    return RunRecorder(open_history(history_path(loaded, flag), writable=True), directory, suite)
