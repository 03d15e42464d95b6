"""How a live request differs from the recorded one, in words a person reads.

A drift is shown per changed path of the normalised request, each path written as
``drift_ignore`` takes it (``messages.0.content``, ``tools.echo.description``), so a
change meant to be ignored can be copied into it. A long string (a system prompt
holding every tool's description) is compared word by word and shows only what
changed, ``[-old-]{+new+}``, with a few words around it; other values show before
and after. Lists are aligned first, so one message inserted reads as one message
added, not as every later message changed. The first line says what changed, on its
own: it is what a summary quotes.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: Words of context kept on each side of a change inside a string.
CONTEXT_WORDS = 4
#: Changes shown inside one string, and changed paths shown in one diff.
MAX_HUNKS = 5
MAX_PATHS = 20
#: The longest a value, or a changed run of words, is shown.
MAX_VALUE_CHARS = 160
#: A string longer than this, or holding a newline, is compared word by word.
WORDWISE_CHARS = 60

_MISSING = object()
_TOKENS = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class Change:
    """One changed path and how it changed (one or more lines, each self-contained);
    ``count``: the changes inside it (more than its lines show, past the cap)."""

    path: str
    lines: tuple[str, ...]
    count: int = 1


def changes(recorded: Any, live: Any, path: str = "") -> Iterator[Change]:
    """Every path at which ``live`` differs from ``recorded``, in document order."""
    if recorded == live:
        return
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key in [*recorded, *(key for key in live if key not in recorded)]:
            yield from changes(
                recorded.get(key, _MISSING), live.get(key, _MISSING), _join(path, key)
            )
    elif isinstance(recorded, list) and isinstance(live, list):
        yield from _list_changes(recorded, live, path)
    elif recorded is _MISSING:
        yield Change(path, (f"added: {_value(live)}",))
    elif live is _MISSING:
        yield Change(path, (f"removed (was {_value(recorded)})",))
    elif isinstance(recorded, str) and isinstance(live, str) and _wordwise(recorded, live):
        hunks = _word_hunks(recorded, live)
        shown = hunks[:MAX_HUNKS]
        if len(hunks) > MAX_HUNKS:
            shown.append(f"... and {len(hunks) - MAX_HUNKS} more changes in this text")
        yield Change(path, tuple(shown), len(hunks))
    else:
        yield Change(path, (f"{_value(recorded)} -> {_value(live)}",))


def describe(recorded: Any, live: Any) -> str:
    """The drift from ``recorded`` to ``live``: a first line that says what changed
    (the whole of it, for one change), then one line per change (empty when they
    are equal)."""
    found = list(changes(recorded, live))
    if not found:
        return ""
    if len(found) == 1 and len(found[0].lines) == 1:
        return f"{found[0].path or 'the request'}: {found[0].lines[0]}"
    if len(found) == 1:
        heading = f"{found[0].path or 'the request'}: {found[0].count} changes"
    else:
        names = ", ".join(change.path or "the request" for change in found[:3])
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        heading = f"{len(found)} paths changed: {names}{more}"
    lines = [heading]
    for change in found[:MAX_PATHS]:
        lines.extend(f"  {change.path}: {line}" for line in change.lines)
    if len(found) > MAX_PATHS:
        lines.append(f"  ... and {len(found) - MAX_PATHS} more changed paths")
    return "\n".join(lines)


def _join(path: str, key: str | int) -> str:
    return f"{path}.{key}" if path else str(key)


def _list_changes(recorded: list[Any], live: list[Any], path: str) -> Iterator[Change]:
    """Items aligned by equality first: an insertion is one added item."""
    keys = [_key(item) for item in recorded], [_key(item) for item in live]
    matcher = difflib.SequenceMatcher(None, *keys, autojunk=False)
    for tag, r0, r1, l0, l1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(r1 - r0, l1 - l0) if tag == "replace" else 0
        for offset in range(paired):  # changed in place: what changed inside each
            yield from changes(recorded[r0 + offset], live[l0 + offset], _join(path, l0 + offset))
        for index in range(r0 + paired, r1):
            yield Change(_join(path, index), (f"removed (was {_value(recorded[index])})",))
        for index in range(l0 + paired, l1):
            yield Change(_join(path, index), (f"added: {_value(live[index])}",))


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def _wordwise(recorded: str, live: str) -> bool:
    return max(len(recorded), len(live)) > WORDWISE_CHARS or "\n" in recorded + live


def _word_hunks(recorded: str, live: str) -> list[str]:
    """Each change inside a long string, with a few words of context either side."""
    before, after = _TOKENS.findall(recorded), _TOKENS.findall(live)
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    context = CONTEXT_WORDS * 2  # a word and the space after it
    hunks = []
    for group in matcher.get_grouped_opcodes(context):
        parts: list[str] = []
        for tag, r0, r1, l0, l1 in group:
            if tag == "equal":
                parts.append(_text("".join(before[r0:r1])))
                continue
            if r1 > r0:
                parts.append(f"[-{_text(''.join(before[r0:r1]))}-]")
            if l1 > l0:
                parts.append(f"{{+{_text(''.join(after[l0:l1]))}+}}")
        first, last = group[0], group[-1]
        lead = "..." if first[0] == "equal" and first[1] > 0 else ""
        tail = "..." if last[0] == "equal" and last[2] < len(before) else ""
        hunks.append(f'"{lead}{"".join(parts)}{tail}"')
    return hunks


def _text(text: str) -> str:
    """A run of a string as a JSON literal's inside (newlines as ``\\n``), cut in the middle."""
    shown = json.dumps(text, ensure_ascii=False)[1:-1]
    if len(shown) <= MAX_VALUE_CHARS:
        return shown
    half = MAX_VALUE_CHARS // 2
    return f"{shown[:half]}...{shown[-half:]}"


def _value(value: Any) -> str:
    """A value as JSON on one line, cut when long."""
    shown = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(shown) <= MAX_VALUE_CHARS:
        return shown
    return shown[: MAX_VALUE_CHARS - 3] + "..."
