"""Secrets the harness holds and never writes: the provider's API key.

A :class:`Secrets` is the values to keep out of every text the harness writes
(reports, recordings, the history), and the environment variables they come
from, which no process the harness starts for an agent inherits. Text that came
from outside (a model's reply, an agent's stderr or exception) is passed through
:meth:`Secrets.text` or :meth:`Secrets.value` where it enters, and once more
where a report is made.

A value is replaced whole by :data:`REDACTED`; and where the harness cut a text
short (``...``), the part of a value left beside the cut is replaced too, so a
quote that stops in the middle of the key does not keep its first half. A value
shorter than :data:`MIN_SECRET_CHARS` is not redacted: a local server's
placeholder key (``none``, ``x``) would otherwise rewrite ordinary words in
every report. What an agent does to a value it holds (encodes it, splits it)
no redaction can undo: that is why no agent is handed the key.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Any, TypeVar

#: What a secret is replaced with.
REDACTED = "[redacted]"

#: The shortest value redacted: shorter ones are placeholders, not secrets.
MIN_SECRET_CHARS = 8

#: The shortest part of a value, beside a cut (``...``), that is redacted.
MIN_FRAGMENT_CHARS = 6

#: How the harness marks a text it cut short.
CUT = "..."
T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Secrets:
    """Values never to be written, and the environment variables holding them.

    ``variables`` are left out of every agent process's environment, whatever
    their values; ``values`` (at least :data:`MIN_SECRET_CHARS` long) are
    redacted from text. Falsy when there is nothing to redact.
    """

    variables: tuple[str, ...] = ()
    values: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Iterable[str | None], variables: Iterable[str] = ()) -> Secrets:
        """``values`` to redact (those long enough, each once), held in ``variables``."""
        kept = dict.fromkeys(v for v in values if v and len(v) >= MIN_SECRET_CHARS)
        return cls(tuple(variables), tuple(kept))

    @classmethod
    def from_environment(
        cls, variables: Iterable[str], environ: Mapping[str, str] | None = None
    ) -> Secrets:
        """The values ``variables`` hold in ``environ`` (default: ``os.environ``)."""
        names = tuple(variables)
        env = os.environ if environ is None else environ
        return cls.of((env.get(name) for name in names), names)

    def __bool__(self) -> bool:
        return bool(self.values)

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """``environ`` without :attr:`variables`: what an agent process inherits."""
        return {name: value for name, value in environ.items() if name not in self.variables}

    def text(self, text: str) -> str:
        """``text`` with every value, and every part of one left beside a cut, redacted."""
        for value in self.values:
            if value in text:
                text = text.replace(value, REDACTED)
        if CUT in text and self._fragments is not None:
            text = self._fragments.sub(REDACTED, text)
        return text

    def value(self, value: T) -> T:
        """``value`` with :meth:`text` applied to every string in it: in lists, tuples,
        mappings (keys too) and dataclass fields, recursively. Other objects are kept
        as they are; so is anything that holds no secret (the same object back)."""
        if not self.values:
            return value
        return _walk(value, self.text)  # type: ignore[no-any-return]

    @cached_property
    def _fragments(self) -> re.Pattern[str] | None:
        """A value's head just before a cut, or its tail just after one."""
        heads = {v[:k] for v in self.values for k in range(MIN_FRAGMENT_CHARS, len(v))}
        tails = {v[-k:] for v in self.values for k in range(MIN_FRAGMENT_CHARS, len(v))}
        if not heads:
            return None
        longest_first = sorted(heads, key=len, reverse=True)
        after = sorted(tails, key=len, reverse=True)
        cut = re.escape(CUT)
        return re.compile(
            f"(?:{'|'.join(map(re.escape, longest_first))})(?={cut})"
            f"|(?<={cut})(?:{'|'.join(map(re.escape, after))})"
        )


def _walk(value: Any, redact: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, (list, tuple)):
        items = [_walk(item, redact) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return type(value)(items) if isinstance(value, list) else _same_tuple(value, items)
    if isinstance(value, Mapping):
        old = list(value.items())
        pairs = [(_walk(key, redact), _walk(item, redact)) for key, item in old]
        if all(new[0] is was[0] and new[1] is was[1] for new, was in zip(pairs, old, strict=True)):
            return value
        return dict(pairs)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {}
        for field in dataclasses.fields(value):
            if not field.init:
                continue
            old = getattr(value, field.name)
            new = _walk(old, redact)
            if new is not old:
                changed[field.name] = new
        return dataclasses.replace(value, **changed) if changed else value
    return value


def _same_tuple(value: tuple[Any, ...], items: list[Any]) -> tuple[Any, ...]:
    """A tuple of ``items`` of ``value``'s type (a named tuple stays one)."""
    if hasattr(value, "_fields"):
        return type(value)(*items)
    return tuple(items)


#: Nothing to keep out: the secrets of a run that holds none.
NO_SECRETS = Secrets()


# --- credentials recognised by their shape ---------------------------------------

#: A credential recognised by its form, whatever its value: an ``Authorization``
#: header's scheme and token, and the key formats of the common providers (OpenAI
#: and Anthropic ``sk-``, AWS access keys, GitHub and Slack tokens, Google API keys).
CREDENTIAL = re.compile(
    r"\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}"
    r"|\bsk-[A-Za-z0-9_-]{16,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|\bAIza[0-9A-Za-z_-]{35}"
)

#: Names under which a value is a credential whatever it looks like (headers, keys).
CREDENTIAL_NAME = re.compile(
    r"(?i)(?:^|[._-])(?:authorization|api[_-]?key|x-api-key|cookie|password|secret|token)$"
)


def redact_credentials(value: T) -> tuple[T, int]:
    """``value`` with every credential redacted: text matching :data:`CREDENTIAL`, and
    the whole string value of a mapping key matching :data:`CREDENTIAL_NAME` (an
    ``authorization`` header); and how many it redacted. Text the harness did not
    make (a trace) is held to this, as the provider's key is held to
    :class:`Secrets`."""
    count = 0

    def text(found: str) -> str:
        nonlocal count
        redacted, hits = CREDENTIAL.subn(REDACTED, found)
        count += hits
        return redacted

    def walk(item: Any) -> Any:
        nonlocal count
        if isinstance(item, Mapping):
            shaped = {}
            for key, entry in item.items():
                if (
                    isinstance(key, str)
                    and isinstance(entry, str)
                    and entry
                    and entry != REDACTED
                    and CREDENTIAL_NAME.search(key)
                ):
                    count += 1
                    shaped[key] = REDACTED
                else:
                    shaped[walk(key)] = walk(entry)
            return shaped
        if isinstance(item, list):
            return [walk(entry) for entry in item]
        if isinstance(item, str):
            return text(item)
        return item

    return walk(value), count
