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
@click.option(
    "--strict",
    is_flag=True,
    help="Fail on every expectation the script can never satisfy, whatever the agent "
    "and whether the suite gates (the pre-commit hook's default).",
)
@config_option
@plugin_option
def check(
    paths: tuple[Path, ...],
    suite: Path | None,
    strict: bool,
    config_path: Path | None,
    blocked: tuple[str, ...],
) -> None:
    """Admit a suite (or the fixture files and suite directories PATHS) and grade each
    fixture against an empty run, running nothing.

    Exit 1 if any fixture is refused, or is vacuous: a run that does nothing
    (no response, no tool call) would pass all of its checks; or if its script can
    never satisfy an expectation (a count bound the scripted calls cannot meet, a
    tool the script never calls, a response needle the scripted final text lacks
    for an agent that passes it through). For an agent other than one that plays
    the script as written (the reference loop), or a non-gating suite, these are
    warnings unless --strict, each saying --strict fails on it. An expectation that
    passes only if the agent writes what no scripted reply holds depends on the
    agent: a warning, said so, even with --strict.
    """
    from zeroclaw_eval.case.consistency import inconsistencies
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
        contradicted = set()
        if plan.mode.replays_scripts:
            # Certain only for an agent that plays the script as written, and a
            # failure only where failures gate: a capability suite holds on purpose
            # what the reference loop cannot do yet.
            # --strict asks for every certain one, whatever the agent or the suite.
            through = plan.agent.passes_replies_through
            certain = strict or (through and plan.config.gating)
            for case in cases:
                for problem in inconsistencies(case, through, plan.agent.dialect):
                    if problem.error and certain:
                        click.echo(f"Error: {problem}", err=True)
                        contradicted.add(case.source)
                    elif problem.error:
                        click.echo(f"Warning: {problem} (--strict fails on it)", err=True)
                    else:
                        click.echo(f"Warning: {problem} (depends on the agent)", err=True)
        if vacuous:
            verb = "is" if len(vacuous) == 1 else "are"
            click.echo(
                f"{len(vacuous)} of {plural(len(cases), 'fixture')} {verb} vacuous", err=True
            )
        if contradicted:
            verb = "has" if len(contradicted) == 1 else "have"
            click.echo(
                f"{len(contradicted)} of {plural(len(cases), 'fixture')} {verb} expectations "
                "the script can never satisfy",
                err=True,
            )
        if vacuous or contradicted:
            sys.exit(1)
        click.echo(f"{plural(len(cases), 'fixture')} admitted; none is satisfied by an empty run")
