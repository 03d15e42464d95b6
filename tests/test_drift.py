"""Drift: a recorded case whose agent now asks the model something else.

The recordings are made by ``zeroclaw eval record --update`` (replay, then store
each step's request), the fixtures or agents then edited the way a team would:
a different user input, a tool removed from the offer, a new system prompt.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from .cli_process import json_report
from .conftest import PROJECT, zeroclaw

REGRESSION = PROJECT / "evals" / "regression"
NOTES_AGENT = PROJECT / "examples" / "agents" / "openai_sdk"
RECALL = "multi_turn_recall_without_repeat_call.json"
GREETING = "greeting_no_tool_calls.json"


def recorded_project(tmp_path: Path, *fixtures: str, config: str = "") -> Path:
    """A project whose suite holds recordings of ``fixtures`` (their requests stored)."""
    (tmp_path / "suite").mkdir(parents=True)
    for name in fixtures:
        shutil.copy(REGRESSION / name, tmp_path / "suite" / name)
    write_config(tmp_path, config)
    updated = zeroclaw("eval", "record", "--update", "--suite", "suite", cwd=tmp_path)
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert f"updated the requests of {len(fixtures)}/{len(fixtures)} cases" in updated.stderr
    return tmp_path


def write_config(root: Path, extra: str = "") -> None:
    text = f'[eval]\nsuite_dir = "suite"\nhistory = "history.sqlite"\n{extra}'
    (root / "zeroclaw.toml").write_text(text, encoding="utf-8")


def edit(path: Path, change: Any) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document, ensure_ascii=False, indent=2), encoding="utf-8")


def new_second_input(document: dict[str, Any]) -> None:
    document["turns"][1]["user_input"] = "Remind me of the order id."


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return zeroclaw("eval", "run", *args, cwd=root)


def test_a_recording_stores_each_steps_request_and_replays_green(tmp_path: Path) -> None:
    root = recorded_project(tmp_path, RECALL)
    fixture = json.loads((root / "suite" / RECALL).read_text(encoding="utf-8"))
    steps = [step for turn in fixture["turns"] for step in turn["steps"]]
    assert all("request" in step for step in steps)
    result = run(root, "-v")
    assert result.returncode == 0, result.stdout
    assert "✓ drift: 3 recorded requests: every live request is as recorded" in result.stdout


def test_a_changed_user_input_fails_under_fail_with_a_diff_naming_turn_and_step(
    tmp_path: Path,
) -> None:
    root = recorded_project(tmp_path, RECALL)
    edit(root / "suite" / RECALL, new_second_input)

    result = run(root)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert (
        "    ✗ drift: turn 1, step 0: the agent's request differs from the recorded one:" in lines
    )
    changed = [line for line in lines if re.match(r" +\| [-+] ", line)]
    assert changed == [
        '        | -      "content": "What was the order id again?"',
        '        | +      "content": "Remind me of the order id."',
    ]
    assert "        | --- recorded request (turn 1, step 0)" in lines
    assert "        | +++ live request (turn 1, step 0)" in lines
    # Only the drift fails: the agent ran, and its other checks still hold.
    assert "5/6 checks" in result.stdout
    assert "error" not in result.stdout

    warned = run(root, "--drift", "warn")
    assert warned.returncode == 0, warned.stdout
    assert "    warning: drift at turn 1, step 0:" in warned.stdout
    assert '        | +      "content": "Remind me of the order id."' in warned.stdout

    off = run(root, "--drift", "off", "-v")
    assert off.returncode == 0
    assert "drift" not in off.stdout


def test_a_tool_removed_from_the_offer_drifts(tmp_path: Path) -> None:
    root = recorded_project(tmp_path, GREETING)
    write_config(root, "[eval.live]\nallowed_tools = []\n")
    result = run(root)
    assert result.returncode == 1
    removed = [line for line in result.stdout.splitlines() if line.startswith("        | - ")]
    assert removed[0] == '        | -  "tools": {'
    assert '        | -    "echo": {' in removed
    assert '        | +  "tools": {},' in result.stdout


def test_the_drift_reaches_the_json_junit_and_github_reports(tmp_path: Path) -> None:
    root = recorded_project(tmp_path, RECALL)
    edit(root / "suite" / RECALL, new_second_input)

    failed = json_report(run(root, "--format", "json"))["cases"][0]
    (drift,) = [check for check in failed["checks"] if not check["passed"]]
    assert drift["check"] == "drift: turn 1, step 0"
    assert '+      "content": "Remind me of the order id."' in drift["detail"].splitlines()
    assert failed["error"] is None
    assert failed["model_requests"]  # a failed case carries what the model was sent

    warned = json_report(run(root, "--format", "json", "--drift", "warn"))["cases"][0]
    assert warned["passed"] is True
    (warning,) = warned["warnings"]
    assert warning.startswith("drift at turn 1, step 0:\n--- recorded request (turn 1, step 0)")

    junit = run(root, "--format", "junit", "--drift", "warn")
    (case,) = ET.fromstring(junit.stdout).iter("testcase")
    assert case.find("failure") is None
    assert "Remind me of the order id." in (case.findtext("system-err") or "")
    junit = run(root, "--format", "junit")
    (case,) = ET.fromstring(junit.stdout).iter("testcase")
    failure = case.find("failure")
    assert failure is not None and "Remind me of the order id." in (failure.text or "")

    github = run(root, "--format", "github", "--drift", "warn").stdout.splitlines()
    (annotation,) = [line for line in github if line.startswith("::warning ")]
    assert '%0A+      "content": "Remind me of the order id."' in annotation
    assert "title=zeroclaw eval%3A regression-multi-turn-recall-without-repeat-call" in annotation


@pytest.mark.parametrize("where", ["config", "fixture"])
def test_ignored_paths_are_not_compared(tmp_path: Path, where: str) -> None:
    root = recorded_project(tmp_path, RECALL)
    edit(root / "suite" / RECALL, new_second_input)
    if where == "config":
        write_config(root, 'drift_ignore = ["messages.*.content"]\n')
    else:
        edit(
            root / "suite" / RECALL,
            lambda document: document.update(drift_ignore=["messages.4.content"]),
        )
    result = run(root)
    assert result.returncode == 0, result.stdout


def test_record_update_refreshes_requests_and_keeps_replies_and_expects(tmp_path: Path) -> None:
    root = recorded_project(tmp_path, RECALL)
    path = root / "suite" / RECALL
    edit(path, new_second_input)
    before = json.loads(path.read_text(encoding="utf-8"))

    updated = zeroclaw("eval", "record", "--update", "--suite", "suite", cwd=root)
    assert updated.returncode == 0, updated.stderr
    assert f"updated suite/{RECALL}\n" in updated.stderr
    after = json.loads(path.read_text(encoding="utf-8"))

    def without_requests(document: dict[str, Any]) -> dict[str, Any]:
        for turn in document["turns"]:
            for step in turn["steps"]:
                step.pop("request")
        return document

    assert after["turns"][1]["steps"][0]["request"]["messages"][-1] == {
        "role": "user",
        "content": "Remind me of the order id.",
    }
    assert without_requests(after) == without_requests(before)
    assert run(root).returncode == 0


def test_update_leaves_a_failing_case_s_fixture_unless_allowed(tmp_path: Path) -> None:
    root = recorded_project(tmp_path, RECALL)
    path = root / "suite" / RECALL

    def changed_and_failing(document: dict[str, Any]) -> None:
        new_second_input(document)
        document["expects"]["response_contains"] = ["a reply the script never gives"]

    edit(path, changed_and_failing)
    before = path.read_bytes()
    kept = zeroclaw("eval", "record", "--update", "--suite", "suite", cwd=root)
    assert kept.returncode == 1
    assert path.read_bytes() == before
    assert (
        f"Error: suite/{RECALL}: not updated: its case failed (1 check); fix the agent or "
        "the case, or pass --allow-failed\n" in kept.stderr
    )
    assert "updated suite/" not in kept.stderr
    assert kept.stderr.endswith("updated the requests of 0/1 cases in suite\n")

    allowed = zeroclaw("eval", "record", "--update", "--allow-failed", "--suite", "suite", cwd=root)
    assert allowed.returncode == 1  # the case still fails
    assert f"updated suite/{RECALL}\n" in allowed.stderr
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["turns"][1]["steps"][0]["request"]["messages"][-1]["content"] == (
        "Remind me of the order id."
    )


def test_allow_failed_goes_with_update(tmp_path: Path) -> None:
    result = zeroclaw(
        "eval", "record", "--out", "o", "--allow-failed", "--suite", str(tmp_path), cwd=tmp_path
    )
    assert result.returncode == 2
    assert "--allow-failed goes with --update" in result.stderr


def test_update_needs_update_or_out_not_both(tmp_path: Path) -> None:
    result = zeroclaw("eval", "record", "--suite", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2
    assert "give --out (record live) or --update (refresh requests)" in result.stderr


def test_a_stored_request_leaning_on_a_missing_one_is_refused(tmp_path: Path) -> None:
    root = recorded_project(tmp_path, RECALL)
    edit(root / "suite" / RECALL, lambda document: document["turns"][0]["steps"][0].pop("request"))
    result = zeroclaw("eval", "check", cwd=root)
    assert result.returncode == 1
    assert (
        f"suite/{RECALL}: turns[0].steps[1].request: refers to the previous step's request, "
        "which is not stored" in result.stderr
    )


def notes_agent_project(tmp_path: Path) -> Path:
    """The example notes agent (Chat Completions over the openai SDK), copied so it can
    be edited, with a recording of its own echo case."""
    root = tmp_path / "notes"
    (root / "suite").mkdir(parents=True)
    shutil.copy(NOTES_AGENT / "notes_agent.py", root)
    shutil.copy(NOTES_AGENT / "suite" / "echo_hello.json", root / "suite")
    write_config(root, '[eval.agent]\nfactory = "notes_agent:make_agent"\n')
    updated = zeroclaw("eval", "record", "--update", "--suite", "suite", cwd=root)
    assert updated.returncode == 0, updated.stdout + updated.stderr
    return root


def test_a_bridged_agent_whose_system_prompt_changes_drifts(tmp_path: Path) -> None:
    root = notes_agent_project(tmp_path)
    assert run(root).returncode == 0
    agent = root / "notes_agent.py"
    source = agent.read_text(encoding="utf-8")
    old = 'SYSTEM = "You are a helpful assistant. Use the tools when they help."'
    assert old in source
    agent.write_text(source.replace(old, 'SYSTEM = "You are terse."'), encoding="utf-8")

    result = run(root)
    assert result.returncode == 1
    changed = [line for line in result.stdout.splitlines() if re.match(r" +\| [-+] ", line)]
    assert changed == [
        '        | -      "content": "You are a helpful assistant. Use the tools when they help."',
        '        | +      "content": "You are terse."',
        '        | -      "content": "You are a helpful assistant. Use the tools when they help."',
        '        | +      "content": "You are terse."',
    ]
    assert "drift: turn 0, step 0" in result.stdout and "drift: turn 0, step 1" in result.stdout
    assert run(root, "--drift", "warn").returncode == 0
    assert run(root, "--drift", "off").returncode == 0


def test_a_bridged_agent_that_stops_offering_a_tool_drifts(tmp_path: Path) -> None:
    root = notes_agent_project(tmp_path)
    agent = root / "notes_agent.py"
    source = agent.read_text(encoding="utf-8")
    # Offer every tool but read_note: the last entry of TOOLS.
    cut = source.index(
        '    {\n        "type": "function",\n        "function": {\n            "name": "read_note"'
    )
    end = source.index("]\n", cut)
    agent.write_text(source[:cut] + source[end:], encoding="utf-8")
    result = run(root)
    assert result.returncode == 1
    assert '        | -    "read_note": {' in result.stdout.splitlines()
