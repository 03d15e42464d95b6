"""An installed distribution's name and version, read from its metadata's header.

``importlib.metadata`` parses the whole metadata file with the ``email`` package
to answer ``dist.name`` or ``dist.version``; both are lines of its header
(``Name: ...``, ``Version: ...``, before the first blank line), which is all a run
needs to say which plugins it loaded.
"""

from __future__ import annotations

from importlib.metadata import Distribution


def name_and_version(dist: Distribution) -> tuple[str | None, str | None]:
    """``(Name, Version)`` of ``dist``'s metadata header; ``None`` for a missing one."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line:
            break  # the header ends at the first blank line
        key, colon, value = line.partition(":")
        if colon and key in ("Name", "Version") and key not in found:
            found[key] = value.strip()
    return found.get("Name"), found.get("Version")
