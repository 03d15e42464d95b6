"""Reports, merged reports and the run history say which agent ran.

Real ``zeroclaw`` processes run the suite with the reference loop and with a
team's agent attached through ``[eval.agent]`` (in-process and as a command).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from zeroclaw_eval.history.store import open_history

from .bridged_helpers import AGENTS, command, configure, factory, write_suite
from .cli_process import json_report
from .conftest import echo_case, zeroclaw

ATTACHED = {
    "factory": (factory("echo_agent:make_agent"), "factory:echo_agent:make_agent"),
    "command": (
        command("echo_agent.py"),
        "command:" + shlex.join([sys.executable, str(AGENTS / "echo_agent.py")]),
    ),
}


def two_cases(directory: Path) -> Path:
    return write_suite(directory, echo_case(model_name="one"), echo_case(model_name="two"))


@pytest.mark.parametrize("attachment", sorted(ATTACHED))
def test_a_bridged_run_names_its_agent_in_reports_and_history(
    tmp_path: Path, attachment: str
) -> None:
    table, name = ATTACHED[attachment]
    config = configure(tmp_path / "project", table)
    suite = two_cases(tmp_path / "suite")
    history = tmp_path / "history.sqlite"
    base = ("eval", "run", "--config", config, "--suite", suite, "--history", history)

    as_json = zeroclaw(*base, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert json_report(as_json)["agent"] == name

    as_text = zeroclaw(*base)
    assert as_text.returncode == 0, as_text.stderr
    assert as_text.stdout.splitlines()[0] == f"agent: {name}"

    with open_history(history, create=False) as opened:
        assert [run.agent for run in opened.runs()] == [name, name]


def test_the_reference_loop_is_named_in_json_and_history_but_not_in_text(tmp_path: Path) -> None:
    suite = two_cases(tmp_path / "suite")
    history = tmp_path / "history.sqlite"
    as_json = zeroclaw("eval", "run", "--suite", suite, "--history", history, "--format", "json")
    assert json_report(as_json)["agent"] == "reference"
    as_text = zeroclaw("eval", "run", "--suite", suite, "--history", history)
    assert as_text.returncode == 0, as_text.stderr
    assert "agent:" not in as_text.stdout
    with open_history(history, create=False) as opened:
        assert [run.agent for run in opened.runs()] == ["reference", "reference"]


def test_merge_keeps_the_agent_and_refuses_shards_of_different_agents(tmp_path: Path) -> None:
    table, name = ATTACHED["factory"]
    config = configure(tmp_path / "project", table)
    suite = two_cases(tmp_path / "suite")
    paths = {}
    for shard, extra in (("1/2", ()), ("2/2", ()), ("2/2-reference", ("--agent", "reference"))):
        path = tmp_path / f"shard-{shard.replace('/', '-')}.json"
        ran = zeroclaw(
            "eval", "run", "--config", config, "--suite", suite,
            "--shard", shard.split("-")[0], "--report", f"json:{path}", *extra,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        paths[shard] = path

    merged = zeroclaw("eval", "merge", paths["1/2"], paths["2/2"], "--format", "json")
    assert merged.returncode == 0, merged.stderr
    assert json_report(merged)["agent"] == name

    refused = zeroclaw("eval", "merge", paths["1/2"], paths["2/2-reference"])
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr
    assert (
        f"agent='reference', but {paths['1/2']} ran agent={name!r}: reports of different agents"
    ) in refused.stderr
