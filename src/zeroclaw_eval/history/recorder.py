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
    """Where a ``run`` is recorded (``path``; ``None`` with ``--no-history``), and
    when it started. The history is checked before any case runs, so that a bad
    one fails fast, and written once the report is out."""

    def __init__(self, path: Path | None, directory: Path, suite: str) -> None:
        self.path = path
        self.directory = directory
        self.suite = suite
        self.started_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self._started = time.perf_counter()

    def append(self, report: SuiteReport, pm: PluginManager | None) -> None:
        """Record the run; nothing happens with ``--no-history``, or for a suite that
        ran no case. Raises :class:`~zeroclaw_eval.errors.HistoryError`."""
        if self.path is None or not report.cases:
            return
        from zeroclaw_eval.history.provenance import git_state, plugin_versions
        from zeroclaw_eval.history.store import RunInfo, open_history

        commit, dirty = git_state(self.directory)
        info = RunInfo(
            started_at=self.started_at,
            suite=self.suite,
            duration_s=time.perf_counter() - self._started,
            agent=report.agent,
            plugins=plugin_versions(pm) if pm is not None else (),
            git_commit=commit,
            git_dirty=dirty,
        )
        with open_history(self.path) as history:
            history.append(report, info)

    def durations(self, mode: str, least_cases: int) -> dict[str, float]:
        """The recorded median duration of each case of this suite in ``mode``, from
        runs of at least ``least_cases`` cases (see
        :meth:`~zeroclaw_eval.history.store.History.case_durations`); empty with
        ``--no-history``, or when the history holds no such run."""
        if self.path is None:
            return {}
        from zeroclaw_eval.history.store import open_history

        with open_history(self.path) as history:
            return history.case_durations(self.suite, mode, least_cases)


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
    from zeroclaw_eval.history.store import open_history

    if disabled or (flag is None and os.environ.get(NO_HISTORY_ENV, "") not in ("", "0")):
        return RunRecorder(None, directory, suite)
    path = history_path(loaded, flag)
    open_history(path, writable=True).close()
    return RunRecorder(path, directory, suite)
