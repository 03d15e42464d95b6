"""OTLP JSON, read without an OpenTelemetry package: files become spans.

Two shapes are read, both the ``ExportTraceServiceRequest`` of the OTLP JSON
encoding: a file holding one such object (an OTLP/HTTP JSON body, pretty-printed
or not), and the OTel file exporter's format, one object per line. Field names
are read in both spellings protobuf's JSON mapping allows (``traceId`` and
``trace_id``); attribute values (``AnyValue``) become plain Python values.

A line or file that is no such JSON is not skipped: it is an :class:`Unread`
entry naming the file and line, for the import to report.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The file names read from a directory given to the import.
SUFFIXES = (".json", ".jsonl", ".ndjson")


@dataclass(frozen=True)
class Event:
    """A span event: its name and attributes."""

    name: str
    attributes: Mapping[str, Any]


@dataclass(frozen=True)
class Span:
    """One span as read: ids (lower-case hex), name, start time, attributes, events,
    whether its status is an error, and the instrumentation scope that made it."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    attributes: Mapping[str, Any]
    events: tuple[Event, ...] = ()
    error: bool = False
    scope: str = ""
    """The instrumentation scope's name and version (``name 1.2``), or ``""``."""
    where: str = ""
    """The file and line it was read from, for messages."""

    def label(self) -> str:
        """``trace T span S``: how a message names the span."""
        return f"trace {self.trace_id} span {self.span_id}"


@dataclass(frozen=True)
class Unread:
    """A part of a file that holds no span that could be read, and why."""

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclass
class Read:
    """What :func:`read_paths` found: the spans, and what it could not read."""

    spans: list[Span] = field(default_factory=list)
    unread: list[Unread] = field(default_factory=list)


def trace_files(paths: Iterable[Path]) -> list[Path]:
    """The files ``paths`` name: each file as given, and a directory's direct
    children whose name ends in one of :data:`SUFFIXES`, sorted (not recursive)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(child for child in path.iterdir() if child.suffix in SUFFIXES))
        else:
            found.append(path)
    return found


def read_paths(paths: Iterable[Path]) -> Read:
    """Every span of every file of ``paths`` (see :func:`trace_files`).

    Raises :class:`OSError` for a file that cannot be opened: a trace that silently
    shrinks would import silently less.
    """
    read = Read()
    for path in trace_files(paths):
        try:
            text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            read.unread.append(
                Unread(str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})")
            )
            continue
        read_text(text, str(path), read)
    return read


def read_text(text: str, name: str, into: Read) -> None:
    """The spans of one file's ``text`` (``name`` in messages), added to ``into``."""
    try:
        whole = json.loads(text)
    except (ValueError, RecursionError):  # one object per line, or no JSON at all
        whole = None
    if isinstance(whole, Mapping):
        _request(whole, name, into)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            document = json.loads(line)
        except ValueError as exc:
            into.unread.append(Unread(where, f"not JSON ({exc})"))
            continue
        except RecursionError:
            into.unread.append(Unread(where, "JSON nested too deeply to read"))
            continue
        if not isinstance(document, Mapping):
            into.unread.append(Unread(where, "not a JSON object (an OTLP export request)"))
            continue
        _request(document, where, into)


def _request(document: Mapping[str, Any], where: str, into: Read) -> None:
    resources = _get(document, "resourceSpans", "resource_spans")
    if not isinstance(resources, list):
        into.unread.append(Unread(where, "no resourceSpans: not an OTLP trace export"))
        return
    for resource in resources:
        scopes = (
            _get(resource, "scopeSpans", "scope_spans") if isinstance(resource, Mapping) else None
        )
        for scoped in scopes if isinstance(scopes, list) else ():
            if not isinstance(scoped, Mapping):
                continue
            scope = scoped.get("scope")
            scope_name = _scope_name(scope if isinstance(scope, Mapping) else {})
            for raw in scoped.get("spans") or ():
                span = _span(raw, scope_name, where)
                if isinstance(span, Unread):
                    into.unread.append(span)
                else:
                    into.spans.append(span)


def _scope_name(scope: Mapping[str, Any]) -> str:
    name = scope.get("name") if isinstance(scope.get("name"), str) else ""
    version = scope.get("version") if isinstance(scope.get("version"), str) else ""
    return f"{name} {version}".strip()


def _span(raw: Any, scope: str, where: str) -> Span | Unread:
    if not isinstance(raw, Mapping):
        return Unread(where, "a span that is not a JSON object")
    trace_id = _id(_get(raw, "traceId", "trace_id"))
    span_id = _id(_get(raw, "spanId", "span_id"))
    if not trace_id or not span_id:
        return Unread(where, f"a span without a traceId or spanId ({raw.get('name')!r})")
    status = raw.get("status")
    code = _get(status, "code") if isinstance(status, Mapping) else None
    events = tuple(
        Event(str(event.get("name", "")), attributes(event.get("attributes")))
        for event in raw.get("events") or ()
        if isinstance(event, Mapping)
    )
    return Span(
        trace_id,
        span_id,
        _id(_get(raw, "parentSpanId", "parent_span_id")),
        str(raw.get("name", "")),
        _int(_get(raw, "startTimeUnixNano", "start_time_unix_nano")),
        attributes(raw.get("attributes")),
        events,
        code in (2, "STATUS_CODE_ERROR"),
        scope,
        where,
    )


def attributes(entries: Any) -> dict[str, Any]:
    """OTLP ``KeyValue`` entries as a dictionary of plain values."""
    found: dict[str, Any] = {}
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, Mapping) and isinstance(entry.get("key"), str):
            found[entry["key"]] = any_value(entry.get("value"))
    return found


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value (``None`` for an empty one)."""
    if not isinstance(value, Mapping):
        return None
    for key in ("stringValue", "string_value"):
        if key in value:
            return value[key]
    for key in ("boolValue", "bool_value"):
        if key in value:
            return bool(value[key])
    for key in ("intValue", "int_value"):
        if key in value:
            return _int(value[key])
    for key in ("doubleValue", "double_value"):
        if key in value:
            return float(value[key])
    array = _get(value, "arrayValue", "array_value")
    if isinstance(array, Mapping):
        return [any_value(item) for item in array.get("values") or ()]
    kvlist = _get(value, "kvlistValue", "kvlist_value")
    if isinstance(kvlist, Mapping):
        return attributes(kvlist.get("values"))
    raw = _get(value, "bytesValue", "bytes_value")
    if isinstance(raw, str):
        return raw  # base64 text: kept as is, never decoded into a message
    return None


def _get(mapping: Any, *names: str) -> Any:
    if not isinstance(mapping, Mapping):
        return None
    for name in names:
        if name in mapping:
            return mapping[name]
    return None


def _id(value: Any) -> str:
    """A trace or span id as lower-case hex: OTLP JSON writes hex; protobuf's own JSON
    mapping writes base64, which some exporters use."""
    if not isinstance(value, str) or not value:
        return ""
    lowered = value.lower()
    if all(char in "0123456789abcdef" for char in lowered) and len(lowered) in (16, 32):
        return lowered
    try:
        return base64.b64decode(value, validate=True).hex()
    except ValueError:
        return lowered


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def spans_by_trace(spans: Iterable[Span]) -> Iterator[tuple[str, list[Span]]]:
    """``spans`` grouped by trace id, in order of each trace's first span."""
    grouped: dict[str, list[Span]] = {}
    for span in spans:
        grouped.setdefault(span.trace_id, []).append(span)
    yield from grouped.items()
