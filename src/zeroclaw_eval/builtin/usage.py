"""A reply's ``usage`` as the provider reported it, in any of the three shapes servers send.

OpenAI-compatible servers do not agree on the shape of ``usage``: Chat Completions
says ``prompt_tokens``/``completion_tokens`` with ``prompt_tokens_details.cached_tokens``
and ``completion_tokens_details.reasoning_tokens``; the Responses API (and proxies
built on it) says ``input_tokens``/``output_tokens`` with ``input_tokens_details``
and ``output_tokens_details``; Anthropic's shape (which some proxies pass through)
counts ``input_tokens`` *without* the cache, reported beside it as
``cache_read_input_tokens`` and ``cache_creation_input_tokens``. Each is read into
one :class:`~zeroclaw_eval.protocol.Usage`, whose ``input_tokens`` always counts
the whole prompt and whose ``output_tokens`` the whole reply.

A figure the server did not send, or sent as something other than a non-negative
integer, stays ``None``: it is never read as 0, so a budget over it is undecided
rather than passed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zeroclaw_eval.protocol import Usage


def usage_of(value: Any) -> Usage | None:
    """The :class:`Usage` a reply's ``usage`` value reports, ``None`` when it reports none.

    ``value`` is the ``usage`` member of a reply document (missing: ``None``).
    """
    if not isinstance(value, Mapping):
        return None
    if "prompt_tokens" in value or "completion_tokens" in value:
        usage = Usage(
            input_tokens=_count(value.get("prompt_tokens")),
            output_tokens=_count(value.get("completion_tokens")),
            cached_input_tokens=_detail(value, "prompt_tokens_details", "cached_tokens"),
            reasoning_tokens=_detail(value, "completion_tokens_details", "reasoning_tokens"),
            # LiteLLM and some gateways add Anthropic's cache write beside the OpenAI shape.
            cache_write_input_tokens=_count(value.get("cache_creation_input_tokens")),
        )
    elif "cache_read_input_tokens" in value or "cache_creation_input_tokens" in value:
        read = _count(value.get("cache_read_input_tokens"))
        written = _count(value.get("cache_creation_input_tokens"))
        uncached = _count(value.get("input_tokens"))
        usage = Usage(
            # Anthropic's input_tokens leaves the cache out: the whole prompt is the sum,
            # known only when every part of it is.
            input_tokens=None
            if uncached is None or read is None or written is None
            else uncached + read + written,
            output_tokens=_count(value.get("output_tokens")),
            cached_input_tokens=read,
            cache_write_input_tokens=written,
        )
    else:
        usage = Usage(
            input_tokens=_count(value.get("input_tokens")),
            output_tokens=_count(value.get("output_tokens")),
            cached_input_tokens=_detail(value, "input_tokens_details", "cached_tokens"),
            reasoning_tokens=_detail(value, "output_tokens_details", "reasoning_tokens"),
        )
    return None if usage == Usage() else usage


def _detail(usage: Mapping[str, Any], details: str, key: str) -> int | None:
    found = usage.get(details)
    return _count(found.get(key)) if isinstance(found, Mapping) else None


def _count(value: Any) -> int | None:
    """A token count as reported, ``None`` when there is none (or it is not a count)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None
