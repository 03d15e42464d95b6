"""Files written whole or not at all.

A report or a recorded fixture cut short by Ctrl-C, a full disk or a crash would
be read later as a complete one. :func:`write_whole` writes beside the target
under a temporary name and renames it over the target, which either keeps the
old file or installs the whole new one.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path


def write_whole(path: Path, text: str, errors: str = "strict") -> None:
    """Write ``text`` (UTF-8) to ``path``, atomically when ``path`` is a regular file
    or does not exist yet. Raises :class:`OSError`.

    Anything else (``/dev/stdout``, a FIFO) is written in place: renaming over it
    would replace the device or pipe itself.
    """
    try:
        regular = stat.S_ISREG(path.stat().st_mode)
    except FileNotFoundError:
        regular = True
    if not regular:
        path.write_text(text, encoding="utf-8", errors=errors)
        return
    temporary = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        temporary.write_text(text, encoding="utf-8", errors=errors)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
