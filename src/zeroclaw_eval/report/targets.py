"""Extra reports written to files: ``zeroclaw eval run --report FORMAT:PATH``.

One run can print text for people and save JUnit XML and JSON for machines. Every
target is checked before any case runs (the format is registered, the path can be
written), because finding out after a long run that the JUnit file cannot be
saved would leave CI without its report.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from zeroclaw_eval.errors import ConfigError
from zeroclaw_eval.report.formatter import Formatter, render
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


def relative_to(specs: Iterable[str], base_dir: Path) -> list[str]:
    """``specs`` read from a configuration file: relative paths made relative to its
    directory (``-`` stays stdout). Raises :class:`ValueError` for a malformed value."""
    made: list[str] = []
    for spec in specs:
        name, path = parse_spec(spec)
        made.append(spec if str(path) == STDOUT else f"{name}:{base_dir / path}")
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
    for spec in specs:
        name, path = parse_spec(spec)
        entry = registry.formatters.get(name)
        if entry is None:
            known = ", ".join(sorted(registry.formatters))
            raise ValueError(f"{spec!r}: unknown format {name!r} (known: {known})")
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
    written and where it was set.
    """
    for target in targets:
        if target.to_stdout:
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
    :class:`~zeroclaw_eval.errors.ReportError` naming a formatter that fails.
    """
    text = render(target.formatter, report, target.plugin)
    try:
        target.path.parent.mkdir(parents=True, exist_ok=True)
        # backslashreplace: a lone surrogate in a detail must not lose the report.
        write_whole(target.path, text, errors="backslashreplace")
    except OSError as exc:
        raise target.cannot_write(exc) from None
