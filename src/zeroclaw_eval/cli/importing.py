"""``zeroclaw eval import``: a team's OpenTelemetry traces become draft fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from zeroclaw_eval.cli.common import (
    config_option,
    errors_to_exit,
    open_session,
    plugin_option,
    warn,
)


@click.command(name="import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Directory the draft fixtures are written to (created if missing).",
)
@click.option(
    "--by",
    type=click.Choice(["trace", "session"]),
    default="trace",
    show_default=True,
    help="One fixture per trace, or per session (gen_ai.conversation.id or session.id; "
    "a trace without one is a session of its own).",
)
@click.option(
    "--tools",
    "tools",
    type=click.Choice(["scripted", "agent"]),
    default="scripted",
    show_default=True,
    help="scripted: the trace's tool results and offer become the fixture's tool_results "
    "and tool_definitions (the reference agent, an agent served its tools); agent: the "
    "agent under test runs its own tools, and their results are only expected.",
)
@click.option(
    "--no-requests",
    "no_requests",
    is_flag=True,
    help="Store no request with the steps (to replay with another agent than the one "
    "traced, whose requests would drift).",
)
@click.option("--force", is_flag=True, help="Overwrite fixtures that already exist in --out.")
@config_option
@plugin_option
def import_traces(
    paths: tuple[Path, ...],
    out: Path,
    by: str,
    tools: str,
    no_requests: bool,
    force: bool,
    config_path: Path | None,
    blocked: tuple[str, ...],
) -> None:
    """Write a draft fixture for each conversation in the OTLP JSON trace files PATHS
    (files, or directories of *.json / *.jsonl files).

    Reads the OTel file exporter's format (one export request per line) and the
    OTLP/HTTP JSON body, with OTel GenAI or OpenInference spans. Each draft holds the
    user turns, the model's replies with the requests they answered, and the
    expectations the trace shows (calls made, tools used, result needles), listed
    under capture.draft_expects for review; credentials in the trace are redacted.
    A span or conversation that cannot be imported is one line on stderr naming it.
    Exit 0 when at least one fixture was written, 1 when none was.
    """
    from zeroclaw_eval.report.model import plural
    from zeroclaw_eval.run.importing import import_traces as run_import

    with errors_to_exit():
        session = open_session(config_path, blocked)
        agent = session.agent()  # the drafts are held to what it can certify
        imported = run_import(
            paths,
            out,
            session.registry,
            by="session" if by == "session" else "trace",
            tools="agent" if tools == "agent" else "scripted",
            requests=not no_requests,
            force=force,
            agent=agent,
        )
        for line in imported.refused:
            warn(line)
        for line in imported.redacted:
            click.echo(line, err=True)
        for written in imported.written:
            click.echo(f"wrote {written}", err=True)
        click.echo(
            f"imported {plural(len(imported.written), 'fixture')} into {out} from "
            f"{plural(imported.spans, 'span')} ({imported.other_spans} neither a model call "
            f"nor a tool run; {len(imported.refused)} not imported)",
            err=True,
        )
    sys.exit(imported.exit_code())
