"""Extra reports written to files: ``zeroclaw eval run --report FORMAT:PATH``.

One run can print text for people and save JUnit XML and JSON for machines. Every
target is checked before any case runs (the format is registered, the path can be
written), because finding out after a long run that the JUnit file cannot be
saved would leave CI without its report.

A format that can send its report (:attr:`~zeroclaw_eval.report.formatter.Formatter.sends`,
the ``otel`` one) also takes a URL for PATH, ``--report otel:http://127.0.0.1:4318/v1/traces``:
checked as strictly before any case runs (``http`` or ``https``, a host, no
credentials, which would be written wherever the target is shown).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from zeroclaw_eval.errors import ConfigError
from zeroclaw_eval.report.formatter import Formatter, render, send
from zeroclaw_eval.report.model import SuiteReport
from zeroclaw_eval.util.atomic import write_whole

if TYPE_CHECKING:
    from zeroclaw_eval.plugins.registry import Registry


@dataclass(frozen=True)
class ReportTarget:
    """One ``--report`` value: a registered formatter and the file it writes."""

    spec: str
    formatter: Formatter
    path: Path
    plugin: str
    """The plugin that registered ``formatter``, for errors naming it."""
    origin: str = "--report"
    """Where the target was set, for errors naming it: ``--report``, or the
    configuration file and its key (``zeroclaw.toml: eval.report``)."""
    url: str | None = None
    """The URL the report is sent to, in place of ``path``, for a format that sends."""

    def cannot_write(self, exc: OSError) -> ConfigError:
        """The error for a path that cannot be written, naming where it was set."""
        return ConfigError(
            f"{self.origin} {self.spec}: cannot write {self.path}: {exc.strerror or exc}"
        )

    @property
    def to_stdout(self) -> bool:
        """``FORMAT:-``: the report goes to stdout, in place of ``--format``'s."""
        return str(self.path) == STDOUT


STDOUT = "-"
"""The PATH of ``--report FORMAT:-``: standard output, as for most command-line tools."""

URL_SCHEMES = ("http", "https")
"""The schemes a PATH is a URL in, for a format that sends its report."""


def is_url(path: str) -> bool:
    """Whether a target's PATH is a URL (``http://...``, ``https://...``), not a file."""
    scheme, colon, _ = path.partition(":")
    return bool(colon) and scheme.lower() in URL_SCHEMES and path[len(scheme) :].startswith("://")


def checked_url(url: str) -> str:
    """``url`` when it is one a report can be sent to. Raises :class:`ValueError`
    saying what is wrong with it."""
    try:
        parts = urlsplit(url)
        port = parts.port  # a port that is not a number, or out of range, raises
    except ValueError as exc:
        raise ValueError(f"not a valid URL: {exc}") from None
    if parts.scheme.lower() not in URL_SCHEMES:
        raise ValueError(f"the URL's scheme is {parts.scheme!r}, not http or https")
    if not parts.hostname:
        raise ValueError("the URL names no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            "the URL holds credentials, which would be written wherever the target is shown: "
            "give them in OTEL_EXPORTER_OTLP_HEADERS"
        )
    if parts.fragment:
        raise ValueError("the URL has a fragment (#...), which is never sent")
    if port == 0:
        raise ValueError("the URL's port is 0")
    return url


def relative_to(specs: Iterable[str], base_dir: Path) -> list[str]:
    """``specs`` read from a configuration file: relative paths made relative to its
    directory (``-`` stays stdout). Raises :class:`ValueError` for a malformed value."""
    made: list[str] = []
    for spec in specs:
        name, path = parse_spec(spec)
        kept = str(path) == STDOUT or is_url(spec.partition(":")[2])
        made.append(spec if kept else f"{name}:{base_dir / path}")
    return made


def parse_spec(spec: str) -> tuple[str, Path]:
    """Split ``FORMAT:PATH`` at its first colon. Raises :class:`ValueError`."""
    name, colon, path = spec.partition(":")
    if not colon or not name or not path:
        raise ValueError(f"{spec!r}: expected FORMAT:PATH, e.g. junit:report.xml")
    return name, Path(path)


def resolve(
    specs: Iterable[str], registry: Registry, origin: str = "--report"
) -> list[ReportTarget]:
    """The targets for ``specs``, with formats looked up; ``origin`` says where they
    were set. Raises :class:`ValueError` for a malformed value, an unknown format or
    a path given twice.
    """
    targets: list[ReportTarget] = []
    seen: dict[Path, str] = {}
    seen_urls: dict[str, str] = {}
    for spec in specs:
        name, path = parse_spec(spec)
        entry = registry.formatters.get(name)
        if entry is None:
            known = ", ".join(sorted(registry.formatters))
            raise ValueError(f"{spec!r}: unknown format {name!r} (known: {known})")
        given = spec.partition(":")[2]
        if is_url(given):
            if not entry.obj.sends:
                raise ValueError(f"{spec!r}: format {name!r} writes files, it cannot send to a URL")
            try:
                url = checked_url(given)
            except ValueError as exc:
                raise ValueError(f"{spec!r}: {exc}") from None
            if url in seen_urls:
                raise ValueError(f"{spec!r}: {url} is also the target of {seen_urls[url]!r}")
            seen_urls[url] = spec
            targets.append(ReportTarget(spec, entry.obj, path, entry.plugin, origin, url))
            continue
        key = Path(os.path.abspath(path))
        if key in seen:
            raise ValueError(f"{spec!r}: {path} is also the target of {seen[key]!r}")
        seen[key] = spec
        targets.append(ReportTarget(spec, entry.obj, path, entry.plugin, origin))
    return targets


def check_writable(targets: Sequence[ReportTarget]) -> None:
    """Prove every target path can be written, leaving no new file behind.

    A missing parent directory is created, as pytest's ``--junitxml`` does. Opening
    for append is the real test (permissions, read-only mounts, a file where a
    directory should be, a directory in the way) and never truncates an existing
    report. Raises :class:`ConfigError` naming the first path that cannot be
    written and where it was set. Each target's formatter is asked first whether
    it can work here (:meth:`~zeroclaw_eval.report.formatter.Formatter.check`).
    """
    for target in targets:
        try:
            target.formatter.check()
        except ConfigError as exc:
            raise ConfigError(f"{target.origin} {target.spec}: {exc}") from None
        if target.to_stdout or target.url is not None:
            continue
        existed = target.path.exists()
        try:
            target.path.parent.mkdir(parents=True, exist_ok=True)
            with target.path.open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            raise target.cannot_write(exc) from None
        if not existed:
            target.path.unlink()


def write_reports(targets: Sequence[ReportTarget], report: SuiteReport) -> None:
    """Render ``report`` with each target's formatter into its file (UTF-8): see
    :func:`write_report`; a ``FORMAT:-`` target is left to the CLI, which prints it.

    Raises :class:`ConfigError` naming the path when one cannot be written, and
    :class:`~zeroclaw_eval.errors.ReportError` naming a formatter that fails.
    """
    for target in targets:
        if not target.to_stdout:
            write_report(target, report)


def write_report(target: ReportTarget, report: SuiteReport) -> None:
    """Render ``report`` with ``target``'s formatter into its file (UTF-8), whole or
    not at all (an interruption leaves the file as it was).

    Raises :class:`ConfigError` naming the path when it cannot be written, and
    :class:`~zeroclaw_eval.errors.ReportError` naming a formatter that fails. A
    target with a URL is sent there instead (:func:`~zeroclaw_eval.report.formatter.send`).
    """
    if target.url is not None:
        send(target.formatter, report, target.url, target.plugin)
        return
    text = render(target.formatter, report, target.plugin)
    try:
        target.path.parent.mkdir(parents=True, exist_ok=True)
        # backslashreplace: a lone surrogate in a detail must not lose the report.
        write_whole(target.path, text, errors="backslashreplace")
    except OSError as exc:
        raise target.cannot_write(exc) from None
