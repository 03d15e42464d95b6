"""``zeroclaw eval record``: run a suite live and write its cases as replay fixtures."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from zeroclaw_eval.cli.common import (
    collector_resumed,
    config_option,
    emit,
    errors_to_exit,
    open_session,
    plugin_option,
    progress_line,
    warn,
)

if TYPE_CHECKING:
    from zeroclaw_eval.plugins.registry import Registry
    from zeroclaw_eval.report.formatter import Formatter


@click.command()
@click.option(
    "--suite",
    type=click.Path(path_type=Path),
    required=True,
    help="Suite of live cases to run.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Directory the replay fixtures are written to (created if missing).",
)
@click.option("--force", is_flag=True, help="Overwrite fixtures that already exist in --out.")
@click.option(
    "--update",
    is_flag=True,
    help="Replay the recorded fixtures of --suite and store in each step the request it "
    "answers now, keeping replies and expects (after a reviewed change of the agent).",
)
@click.option(
    "--allow-failed",
    "allow_failed",
    is_flag=True,
    help="With --update: also rewrite the fixtures whose case failed (by default they "
    "are left as they are, each named).",
)
@click.option(
    "--replay-until",
    "replay_until",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Replay each case's first N turns from its script, then continue live and "
    "record the rest (to reproduce what goes wrong at turn N).",
)
@config_option
@plugin_option
def record(
    suite: Path,
    out: Path | None,
    force: bool,
    update: bool,
    allow_failed: bool,
    replay_until: int | None,
    config_path: Path | None,
    blocked: tuple[str, ...],
) -> None:
    """Run a suite live and write each case as a replay fixture of the model's replies.

    A fixture keeps the case's name, inputs and expects; its steps are what the
    model answered, each with the request it answered (normalised). It replays to
    the verdict the live run had. A case that hit a run error, or whose recording
    replay would refuse, is reported and not written. Exit 0 iff every case passed
    and was written.

    With --update, nothing runs live: the fixtures of --suite are replayed and
    rewritten in place with the requests their steps answer now, each rewritten one
    named; a fixture whose case failed is left as it is unless --allow-failed. With
    --replay-until N, each case's first N turns are replayed from its script and
    only the rest run live.
    """
    from zeroclaw_eval.run.recording import record_suite, update_suite

    with errors_to_exit():
        if update == (out is not None):
            raise click.UsageError("give --out (record live) or --update (refresh requests)")
        if update and replay_until is not None:
            raise click.UsageError("--replay-until records live turns; --update runs none")
        if allow_failed and not update:
            raise click.UsageError("--allow-failed goes with --update")
        session = open_session(config_path, blocked)
        formatter = text_formatter(session.registry)  # before running anything
        if update:
            recorded = update_suite(
                session,
                suite,
                progress=progress_line(),
                admitted=collector_resumed,
                allow_failed=allow_failed,
            )
            total = len(recorded.report.cases)
            done = f"updated the requests of {recorded.written}/{total} cases in {suite}"
        else:
            assert out is not None
            recorded = record_suite(
                session,
                suite,
                out,
                force=force,
                replay_until=replay_until,
                progress=progress_line(),
                admitted=collector_resumed,
            )
            done = f"recorded {recorded.written}/{len(recorded.report.cases)} cases into {out}"
        emit(session.render(formatter, recorded.report))
        for line in recorded.refused:
            warn(line)
        for source in recorded.updated:
            click.echo(f"updated {source}", err=True)
        click.echo(done, err=True)
    sys.exit(recorded.exit_code())


def text_formatter(registry: Registry) -> Formatter:
    """The ``text`` formatter ``record`` prints with; missing only when it was blocked."""
    from zeroclaw_eval.errors import ConfigError

    entry = registry.formatters.get("text")
    if entry is not None:
        return entry.obj
    if "text" in registry.blocked:
        raise ConfigError(
            "record prints its report with the 'text' formatter, and the plugin 'text' "
            "that provides it is blocked (-p no:text or ZEROCLAW_EVAL_DISABLE_PLUGINS)"
        )
    raise ConfigError("record prints its report with the 'text' formatter, which is not registered")
