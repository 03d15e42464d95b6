"""The CI recipes the project ships run what they say: ``.pre-commit-hooks.yaml`` and
the GitHub workflow (``examples/ci/evals.yml``, which docs/how-to/ci.md shows) are parsed as
YAML, and every ``zeroclaw`` command in them is run for real."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import PROJECT, ZEROCLAW, echo_case, zeroclaw


def test_the_pre_commit_hook_runs_zeroclaw_eval_check() -> None:
    hooks: list[dict[str, Any]] = yaml.safe_load(
        (PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    )
    assert [hook["id"] for hook in hooks] == ["zeroclaw-eval-check"]
    hook = hooks[0]
    assert hook["language"] == "python"  # pre-commit installs this package for it
    assert hook["pass_filenames"] is False  # the command takes no file arguments
    argv = shlex.split(hook["entry"])
    assert argv == ["zeroclaw", "eval", "check", "--strict"]
    # What pre-commit runs, from the repository root: the shipped suite passes.
    result = zeroclaw(*argv[1:], cwd=PROJECT)
    assert result.returncode == 0, result.stderr
    assert "fixtures admitted" in result.stdout


def test_the_pre_commit_hook_fails_on_a_vacuous_fixture(tmp_path: Path) -> None:
    hooks = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    suite = tmp_path / "evals" / "regression"
    suite.mkdir(parents=True)
    (suite / "vacuous.json").write_text(
        '{"model_name": "v", "turns": [{"user_input": "hi", "steps": [{"response": '
        '{"type": "text", "content": "hello"}}]}], "expects": {"max_tool_calls": 0}}',
        encoding="utf-8",
    )
    result = zeroclaw(*shlex.split(hooks[0]["entry"])[1:], cwd=tmp_path)
    assert result.returncode == 1
    assert "vacuous" in result.stderr


# --- the CI guide's workflow -------------------------------------------------------

EXPRESSION = re.compile(r"\$\{\{\s*matrix\.(\w+)\s*\}\}")


WORKFLOW = PROJECT / "examples" / "ci" / "evals.yml"


def readme_workflow() -> dict[str, Any]:
    """The workflow file the project ships, parsed: the one the CI guide shows."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(workflow, dict)
    return workflow


def test_the_ci_guide_shows_the_shipped_workflow_as_it_is() -> None:
    section = (PROJECT / "docs" / "how-to" / "ci.md").read_text(encoding="utf-8")
    [shown] = [b for b in re.findall(r"```yaml\n(.*?)```", section, re.DOTALL) if "jobs:" in b]
    shipped = WORKFLOW.read_text(encoding="utf-8")
    # The file opens with a comment saying where it goes; the rest is the guide's block.
    lines = shipped.splitlines(keepends=True)
    opening = next(index for index, line in enumerate(lines) if not line.startswith("#"))
    assert opening > 0 and "".join(lines[opening:]) == shown
    assert "(../../examples/ci/evals.yml)" in section


def job_order(jobs: dict[str, Any]) -> list[str]:
    """The jobs in an order their ``needs`` allow."""
    order: list[str] = []
    while len(order) < len(jobs):
        ready = [
            name
            for name, job in jobs.items()
            if name not in order and set(_needs(job)) <= set(order)
        ]
        assert ready, f"jobs wait on each other: {jobs.keys() - set(order)}"
        order.extend(ready)
    return order


def _needs(job: dict[str, Any]) -> list[str]:
    needs = job.get("needs", [])
    return [needs] if isinstance(needs, str) else list(needs)


def commands_of(workflow: dict[str, Any]) -> list[tuple[str, str]]:
    """Every ``run:`` command of the workflow, (job, command), with the matrix expanded."""
    found = []
    for name in job_order(workflow["jobs"]):
        job = workflow["jobs"][name]
        matrix = job.get("strategy", {}).get("matrix", {})
        variants = [{key: value} for key, values in matrix.items() for value in values] or [{}]
        for variant in variants:
            for step in job["steps"]:
                if "run" not in step:
                    continue
                command = step["run"].split("#", 1)[0].strip()
                found.append((name, expand(command, variant)))
    return found


def expand(command: str, variant: dict[str, Any]) -> str:
    """``command`` with its ``${{ matrix.KEY }}`` expressions replaced from ``variant``."""
    return EXPRESSION.sub(lambda match: str(variant[match[1]]), command)


def checkout(tmp_path: Path, red: bool) -> Path:
    """What actions/checkout leaves: a work tree holding the project's suite."""
    root = tmp_path / "checkout"
    (root / ".git").mkdir(parents=True)
    shutil.copytree(PROJECT / "evals" / "regression", root / "evals" / "regression")
    if red:
        # Red only when it runs: no script can tell what the tool will return.
        expects = {"tool_results_contain": [{"tool": "echo", "needle": "absent"}]}
        case = echo_case(model_name="red-case", expects=expects)
        (root / "evals" / "regression" / "red.json").write_text(json.dumps(case))
    return root


def test_the_readme_workflow_shards_four_ways_and_merges() -> None:
    workflow = readme_workflow()
    assert set(workflow["jobs"]) == {"check", "shard", "gate"}
    assert workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    assert workflow["jobs"]["gate"]["if"] == "${{ !cancelled() }}"
    zeroclaw_commands = [cmd for _, cmd in commands_of(workflow) if cmd.startswith("zeroclaw")]
    assert "zeroclaw eval run --shard 4/4 --report json:shard-4.json" in zeroclaw_commands
    assert zeroclaw_commands[-1] == "zeroclaw eval merge shard-*.json --format github"


@pytest.mark.parametrize("red", [False, True], ids=["green", "red"])
def test_every_command_of_the_readme_workflow_runs(red: bool, tmp_path: Path) -> None:
    """Run the workflow's commands in job order in one checkout (the artifacts the
    shard jobs upload are where the gate job downloads them). Only ``pip install``
    is not run: this environment has the package installed already."""
    root = checkout(tmp_path, red)
    summary = tmp_path / "summary.md"
    env = {
        **os.environ,
        "PATH": f"{ZEROCLAW.parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_WORKSPACE": str(root),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    outcomes = {}
    for job, command in commands_of(readme_workflow()):
        if command.startswith("pip install"):
            continue
        assert command.startswith("zeroclaw "), f"the workflow runs an unknown tool: {command}"
        # Every option the command uses exists: --help after them exits 0, not 2.
        argv = shlex.split(command)
        helped = subprocess.run(
            [*argv, "--help"], cwd=root, env=env, capture_output=True, text=True, check=False
        )
        assert helped.returncode == 0, (command, helped.stderr)
        # And it does its work, as GitHub's bash would run it (globs expanded).
        done = subprocess.run(
            ["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True, check=False
        )
        outcomes[(job, command)] = done
        assert "Traceback" not in done.stderr
    gate = outcomes[("gate", "zeroclaw eval merge shard-*.json --format github")]
    assert outcomes[("check", "zeroclaw eval check --strict")].returncode == 0
    assert sorted(path.name for path in root.glob("shard-*.json")) == [
        f"shard-{k}.json" for k in range(1, 5)
    ]
    text = summary.read_text(encoding="utf-8")
    if red:
        assert gate.returncode == 1
        assert "::error file=evals/regression/red.json,line=" in gate.stdout
        assert "### ❌ zeroclaw eval" in text
    else:
        assert gate.returncode == 0, gate.stderr
        assert "::error" not in gate.stdout
        assert "### ✅ zeroclaw eval" in text
    assert gate.stdout.splitlines()[-1].endswith("cases passed")
