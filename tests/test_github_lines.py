"""``--format github`` on a refused suite: each annotation on the line of the key it
is about, a last line that does not read as a pass, and a summary naming the agent."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .conftest import echo_case, zeroclaw
from .test_github_format import commands


def line_of(path: Path, text: str, after: str = "") -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i for i in range(start, len(lines)) if text in lines[i]) + 1


def test_a_refusal_is_annotated_on_the_line_of_its_key(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    suite = tmp_path / "suite"
    suite.mkdir()
    typo = echo_case()
    step = typo["turns"][0]["steps"][0]["response"]["tool_calls"][0]
    step["argumnets"] = step.pop("arguments")
    bad_family = echo_case(expects={"min_tool_calls": 0})
    for name, case in (("typo.json", typo), ("bound.json", bad_family)):
        (suite / name).write_text(json.dumps(case, indent=2), encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", "suite", "--format", "github", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == "no case was run"
    found = {(c["file"], c["message"].split(":")[0]): c for c in commands(result.stdout)[1:]}
    argumnets = found["suite/typo.json", "turns[0].steps[0].response.tool_calls[0].argumnets"]
    assert int(argumnets["line"]) == line_of(suite / "typo.json", '"argumnets"')
    bound = found["suite/bound.json", "expects.min_tool_calls=0"]
    assert int(bound["line"]) == line_of(suite / "bound.json", '"min_tool_calls"', '"expects"')


def test_the_step_summary_names_a_bridged_agent(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "case.json").write_text(json.dumps(echo_case()), encoding="utf-8")
    agent = Path(__file__).parent / "agents" / "echo_agent.py"
    command = json.dumps([sys.executable, str(agent)])
    (project / "zeroclaw.toml").write_text(
        f'[eval]\nsuite_dir = "."\n[eval.agent]\ncommand = {command}\n', encoding="utf-8"
    )
    summary = tmp_path / "summary.md"
    result = zeroclaw(
        "eval", "run", "--format", "github", "--no-history", cwd=project,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "agent `command:" in summary.read_text(encoding="utf-8")
