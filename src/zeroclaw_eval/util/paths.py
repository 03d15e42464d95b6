"""How fixture files are named in reports: relative to the work tree, wherever the run started.

A report read in CI, merged from shards or clicked in an editor should name
``evals/regression/case.json`` whether the command ran at the top of the
checkout, in ``evals/`` or on another machine. So a path is shown relative to
the work tree's top (the nearest directory up from the working directory holding
``.git``, a directory or a worktree's file), else relative to the configuration's
directory; a path outside both is shown as it was given.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def work_tree(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that holds ``.git``, else ``None``."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def display_root(config_dir: Path, cwd: Path | None = None) -> Path:
    """Where shown paths are relative to: the work tree's top, else ``config_dir``."""
    cwd = Path(os.path.abspath(cwd or Path.cwd()))
    return work_tree(cwd) or Path(os.path.abspath(config_dir))


def shown_from(root: Path) -> Callable[[Path], str]:
    """A function naming a path relative to ``root`` (with ``/``); one outside ``root``
    is shown as given, or normalized when it was given absolute."""
    base = os.path.abspath(root)
    inside = os.path.normcase(os.path.join(base, ""))  # with one trailing separator
    cwd = os.getcwd()  # once: abspath would ask the system again for every fixture

    def shown(path: Path) -> str:
        # os.path.abspath, with the working directory of when the names were fixed;
        # it folds away "..", which relative_to cannot.
        absolute = os.path.normpath(os.path.join(cwd, path))
        # A suite names thousands of fixtures: the usual case, a path inside the
        # root, is cut as a string, since a PurePath per name cost more than
        # reading the fixture. pathlib decides everything else.
        if os.path.normcase(absolute).startswith(inside):
            relative = absolute[len(inside) :]
            if relative and not relative.startswith(os.sep):  # "//a" is not inside "/"
                return relative.replace(os.sep, "/")
        try:
            return Path(absolute).relative_to(base).as_posix()
        except ValueError:
            return absolute if path.is_absolute() else str(path)

    return shown
