"""Where a run came from, for its row in the history: the git commit of the suite's
work tree (and whether it had uncommitted changes), and the plugins that were loaded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from zeroclaw_eval.util.paths import work_tree
from zeroclaw_eval.version import __version__

if TYPE_CHECKING:
    import subprocess

    from zeroclaw_eval.plugins.manager import PluginManager

_STATUS = ["git", "status", "--porcelain=v2", "--branch", "--untracked-files=no"]


class GitState:
    """``git status`` of the work tree holding a directory, asked in the background.

    The command starts when this is made and is read by :meth:`result`, so that it
    runs while the cases do. Outside a work tree (no ``.git`` at or above the
    directory, and no ``GIT_DIR`` in the environment) git is not started at all:
    it could only say so. :meth:`close` ends it if it is still running.
    """

    def __init__(self, directory: Path) -> None:
        self._process: subprocess.Popen[str] | None = None
        where = directory if directory.is_dir() else directory.parent
        if work_tree(Path(os.path.abspath(where))) is None and not os.environ.get("GIT_DIR"):
            return
        import subprocess  # only here: a run outside a work tree neither starts nor imports it

        try:
            self._process = subprocess.Popen(
                _STATUS,
                cwd=where,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                # A status asked in passing must not take the index lock from the
                # user's own git commands (it would refresh the index otherwise).
                env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
            )
        except (OSError, subprocess.SubprocessError):  # git is not installed
            self._process = None

    def result(self, timeout_s: float = 10) -> tuple[str | None, bool | None]:
        """``(commit, dirty)``; ``(None, None)`` outside a work tree, without git, or
        when git does not answer within ``timeout_s``.

        Untracked files do not make a tree dirty (as for ``git describe --dirty``):
        a stray file does not change what ran.
        """
        if self._process is None:
            return None, None
        import subprocess

        try:
            stdout, _ = self._process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.close()
            return None, None
        if self._process.returncode != 0:
            return None, None
        commit = None
        dirty = False
        for line in stdout.splitlines():
            if line.startswith("# branch.oid "):
                oid = line.removeprefix("# branch.oid ").strip()
                commit = None if oid == "(initial)" else oid
            elif not line.startswith("#"):
                dirty = True
        return commit, dirty

    def close(self) -> None:
        """Stop git if it still runs, and reap it. Idempotent."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
            process.communicate()


def git_state(directory: Path) -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the git work tree holding ``directory``, now (see
    :meth:`GitState.result`)."""
    return GitState(directory).result()


def plugin_versions(pm: PluginManager) -> list[dict[str, str | None]]:
    """Every loaded plugin: its name, distribution and version (a built-in's are
    zeroclaw-eval's own: its ``__version__``, not a search of the installed metadata)."""
    return [
        {
            "name": origin.name,
            "distribution": "zeroclaw-eval" if origin.builtin else origin.distribution,
            "version": __version__ if origin.builtin else origin.version,
        }
        for origin in pm.origins.values()
    ]
