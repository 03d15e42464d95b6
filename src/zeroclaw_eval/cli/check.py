"""``zeroclaw eval check``: admit a suite and find its vacuous fixtures, running nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from zeroclaw_eval.cli.common import (
    collector_resumed,
    config_option,
    errors_to_exit,
    open_session,
    plugin_option,
    suite_option,
)


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@suite_option
@config_option
@plugin_option
def check(
    paths: tuple[Path, ...], suite: Path | None, config_path: Path | None, blocked: tuple[str, ...]
) -> None:
    """Admit a suite (or the fixture files and suite directories PATHS) and grade each
    fixture against an empty run, running nothing.

    Exit 1 if any fixture is refused, or is vacuous: a run that does nothing
    (no response, no tool call) would pass all of its checks.
    """
    from zeroclaw_eval.case.suite import vacuity
    from zeroclaw_eval.report.model import plural
    from zeroclaw_eval.run.session import RunRequest

    with errors_to_exit():
        request = RunRequest(paths=paths, suite=suite)
        session = open_session(config_path, blocked)
        plan = session.admission()
        cases = session.admit(
            plan, request.paths, session.suite_dir(request.suite), admitted=collector_resumed
        )
        vacuous = [found for case in cases if (found := vacuity(case)) is not None]
        for found in vacuous:
            click.echo(f"Error: {found}", err=True)
        if vacuous:
            verb = "is" if len(vacuous) == 1 else "are"
            click.echo(
                f"{len(vacuous)} of {plural(len(cases), 'fixture')} {verb} vacuous", err=True
            )
            sys.exit(1)
        click.echo(f"{plural(len(cases), 'fixture')} admitted; none is satisfied by an empty run")
