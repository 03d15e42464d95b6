"""The command line: ``zeroclaw eval run | check | plugins``.

This is the one boundary where errors become text: every
:class:`~zeroclaw_eval.errors.ZeroclawEvalError` is printed as ``Error: ...`` on
stderr with exit code 1; usage errors exit 2 (click's convention). Exit code 0
means every case passed, and nothing else.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from zeroclaw_eval.admission import Case
    from zeroclaw_eval.config import LoadedConfig
    from zeroclaw_eval.mode import RunMode
    from zeroclaw_eval.registry import Registry
    from zeroclaw_eval.report import Formatter

# The harness itself is imported inside the commands: ``zeroclaw --help`` and
# usage errors answer without paying for pydantic and the plugins.

_COLLECTOR_PAUSED = "zeroclaw_eval.collector_paused"
"""Set in ``ctx.meta`` when :func:`main` paused the cyclic collector."""

CONFIG_HELP = "TOML file with an [eval] table (default: ./zeroclaw.toml, else ./pyproject.toml)."


@click.group()
@click.version_option(package_name="zeroclaw-eval")
@click.pass_context
def main(ctx: click.Context) -> None:
    """zeroclaw: tools for the zeroclaw agent loop."""
    # No cyclic garbage collection until the suite is admitted: see _load_suite.
    # Put back when the command ends, for in-process invocations.
    if gc.isenabled():
        gc.disable()
        ctx.meta[_COLLECTOR_PAUSED] = True
        ctx.call_on_close(gc.enable)


@main.group(name="eval")
def eval_group() -> None:
    """Replay agent-loop fixtures and gate CI on their expectations."""


@contextmanager
def _errors() -> Iterator[None]:
    """Turn the harness's own errors into ``Error: ...`` lines and exit code 1."""
    from zeroclaw_eval.errors import SuiteLoadError, ZeroclawEvalError

    try:
        yield
    except ZeroclawEvalError as exc:
        click.echo(f"Error: {exc}", err=True)
        if isinstance(exc, SuiteLoadError):
            for problem in exc.problems:
                click.echo(f"Error: {problem}", err=True)
        sys.exit(1)


def _setup(config_path: Path | None) -> tuple[LoadedConfig, Registry]:
    from zeroclaw_eval.config import load_config
    from zeroclaw_eval.plugins import get_plugin_manager
    from zeroclaw_eval.registry import Registry

    loaded = load_config(config_path)
    return loaded, Registry.from_plugin_manager(get_plugin_manager())


def _load_suite(directory: Path, registry: Registry, mode: RunMode) -> list[Case]:
    """Admit the suite, then let the cyclic collector run, blind to all built so far.

    What a command builds before its cases run (pydantic and its models, the
    plugins, the admitted cases) lives until the process exits and is next to no
    garbage, yet the collector traversed it again and again as it grew, and once
    more at exit. So :func:`main` pauses the collector, and here ``gc.freeze()``
    puts every object alive out of its sight for good before it resumes: it
    collects what running the cases makes (tools and modes may make cycles), and
    nothing else. CPU time (benchmarks/run.py): W1 0.47 -> 0.35 s, W4 4.1 -> 2.7 s.
    """
    from zeroclaw_eval.suite import load_suite

    try:
        return load_suite(directory, registry, mode)
    finally:
        gc.freeze()
        if click.get_current_context().meta.get(_COLLECTOR_PAUSED):
            gc.enable()


def _suite_dir(loaded: LoadedConfig, suite: Path | None) -> Path:
    """``--suite`` is relative to the working directory; the file's, to the file."""
    if suite is not None:
        return suite
    configured = Path(loaded.config.suite_dir)
    if configured.is_absolute() or loaded.base_dir.resolve() == Path.cwd().resolve():
        return configured  # kept relative, so reports name fixtures as the user does
    return loaded.base_dir / configured


def _formatter(registry: Registry, name: str, from_flag: bool, loaded: LoadedConfig) -> Formatter:
    from zeroclaw_eval.errors import ConfigError

    entry = registry.formatters.get(name)
    if entry is not None:
        return entry.obj
    known = ", ".join(sorted(registry.formatters))
    if from_flag:
        raise click.BadParameter(
            f"unknown format {name!r} (known: {known})", param_hint="'--format'"
        )
    raise ConfigError(f"{loaded.field('format')}={name!r}: unknown format (known: {known})")


suite_option = click.option(
    "--suite",
    type=click.Path(path_type=Path),
    default=None,
    help="Suite directory (overrides [eval].suite_dir).",
)
config_option = click.option(
    "--config", "config_path", type=click.Path(path_type=Path), default=None, help=CONFIG_HELP
)


@eval_group.command()
@suite_option
@click.option(
    "--mode", default=None, help="Run mode (overrides [eval].mode): replay, or a plugin's."
)
@click.option(
    "--format",
    "format_name",
    default=None,
    help="Report format for stdout (text, json, or a plugin's).",
)
@config_option
def run(
    suite: Path | None, mode: str | None, format_name: str | None, config_path: Path | None
) -> None:
    """Run a suite and print its report. Exit 0 iff every case passed."""
    from zeroclaw_eval.errors import SuiteLoadError
    from zeroclaw_eval.report import SuiteReport
    from zeroclaw_eval.runner import run_cases, select_mode

    with _errors():
        loaded, registry = _setup(config_path)
        config = loaded.config
        if mode is not None or format_name is not None:
            config = config.model_copy(
                update={"mode": mode or config.mode, "format": format_name or config.format}
            )
        formatter = _formatter(registry, config.format, format_name is not None, loaded)
        directory = _suite_dir(loaded, suite)
        try:
            run_mode = select_mode(registry, config.mode)
            cases = _load_suite(directory, registry, run_mode)
        except SuiteLoadError as exc:
            if formatter.machine_readable:
                errors = (str(exc), *exc.problems)
                report = SuiteReport(str(directory), (), config.mode, errors)
                click.echo(formatter.render(report), nl=False)
            raise
        report = run_cases(cases, run_mode, registry, config, suite=str(directory))
        click.echo(formatter.render(report), nl=False)
    sys.exit(report.exit_code())


@eval_group.command()
@suite_option
@config_option
def check(suite: Path | None, config_path: Path | None) -> None:
    """Admit a suite and grade each fixture against an empty run, running nothing.

    Exit 1 if any fixture is refused, or is vacuous: a run that does nothing
    (no response, no tool call) would pass all of its checks.
    """
    from zeroclaw_eval.runner import select_mode
    from zeroclaw_eval.suite import vacuity

    with _errors():
        loaded, registry = _setup(config_path)
        directory = _suite_dir(loaded, suite)
        cases = _load_suite(directory, registry, select_mode(registry, loaded.config.mode))
        vacuous = [found for case in cases if (found := vacuity(case)) is not None]
        for found in vacuous:
            click.echo(f"Error: {found}", err=True)
        if vacuous:
            click.echo(f"{len(vacuous)}/{len(cases)} fixtures are vacuous", err=True)
            sys.exit(1)
        click.echo(f"{len(cases)} fixtures admitted; none is satisfied by an empty run")


@eval_group.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON document instead of text.")
def plugins(as_json: bool) -> None:
    """List the registered plugins, where they come from and what they provide."""
    from zeroclaw_eval.plugins import get_plugin_manager
    from zeroclaw_eval.registry import KINDS, Registry

    with _errors():
        pm = get_plugin_manager()
        registry = Registry.from_plugin_manager(pm)
    rows = [
        {
            "name": origin.name,
            "distribution": origin.distribution,
            "version": origin.version,
            "entry_point": origin.entry_point,
            "provides": registry.provided_by(origin.name),
        }
        for origin in pm.origins.values()
    ]
    if as_json:
        click.echo(json.dumps({"plugins": rows}, indent=2))
        return
    for origin in pm.origins.values():
        source = f"{origin.distribution} {origin.version}" if origin.distribution else "built-in"
        click.echo(f"{origin.name} ({source})")
        provided = registry.provided_by(origin.name)
        for kind in KINDS:
            if provided[kind]:
                click.echo(f"    {kind}: {', '.join(provided[kind])}")
