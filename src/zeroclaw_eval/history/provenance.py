"""Where a run came from, for its row in the history: the git commit of the suite's
work tree (and whether it had uncommitted changes), and the plugins that were loaded.
"""

from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path

from zeroclaw_eval.plugins.manager import PluginManager


def git_state(directory: Path) -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the git work tree holding ``directory``; ``(None, None)``
    outside one, or when git is not installed.

    One ``git status`` call gives both. Untracked files do not make a tree dirty (as
    for ``git describe --dirty``): a stray file does not change what ran.
    """
    try:
        completed = subprocess.run(
            ["git", "status", "--porcelain=v2", "--branch", "--untracked-files=no"],
            cwd=directory if directory.is_dir() else directory.parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None, None
    if completed.returncode != 0:
        return None, None
    commit = None
    dirty = False
    for line in completed.stdout.splitlines():
        if line.startswith("# branch.oid "):
            oid = line.removeprefix("# branch.oid ").strip()
            commit = None if oid == "(initial)" else oid
        elif not line.startswith("#"):
            dirty = True
    return commit, dirty


def plugin_versions(pm: PluginManager) -> list[dict[str, str | None]]:
    """Every loaded plugin: its name, distribution and version (a built-in's are
    zeroclaw-eval's own)."""
    try:
        own = metadata.version("zeroclaw-eval")
    except metadata.PackageNotFoundError:  # run from a source tree
        own = None
    return [
        {
            "name": origin.name,
            "distribution": "zeroclaw-eval" if origin.builtin else origin.distribution,
            "version": own if origin.builtin else origin.version,
        }
        for origin in pm.origins.values()
    ]
