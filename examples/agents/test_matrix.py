"""The conformance matrix, through the real CLI: each stack's honest configurations pass,
and each broken variant fails for its own reason and for nothing else.

Run ``python examples/agents/matrix.py install`` first (``.ci/run`` does). A stack
whose environment is missing fails under CI and is skipped elsewhere, saying how to
make it.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest
from matrix import PROJECT, Run, stacks  # beside this file

STACKS = {stack.name: stack for stack in stacks()}
RUNS = [run for stack in STACKS.values() for run in stack.runs]


def test_the_matrix_holds_at_least_ten_stacks_each_with_its_broken_variants() -> None:
    assert len(STACKS) >= 10, sorted(STACKS)
    for stack in STACKS.values():
        honest = [run for run in stack.runs if run.passes]
        broken = [run for run in stack.runs if not run.passes]
        assert honest, f"{stack.name}: no configuration that passes"
        assert len(broken) >= 6, f"{stack.name}: {len(broken)} broken variants"


def failing(report: dict[str, Any]) -> dict[str, list[str]]:
    """Each failing check's title, with the details it failed with across the cases."""
    found: dict[str, list[str]] = {}
    for case in report["cases"]:
        for check in case["checks"]:
            if not check["passed"]:
                found.setdefault(check["check"], []).append(check["detail"])
    return found


@pytest.mark.parametrize("run", RUNS, ids=[run.id for run in RUNS])
def test_each_configuration_comes_out_as_the_matrix_says(run: Run) -> None:
    stack = STACKS[run.stack]
    if not stack.zeroclaw.exists() or (
        stack.env == "node" and not (stack.directory / "node_modules").is_dir()
    ):
        message = f"run: python examples/agents/matrix.py install {stack.name}"
        if os.environ.get("CI"):
            pytest.fail(f"the environment of {stack.name} is missing; {message}")
        pytest.skip(message)
    result = subprocess.run(
        [str(stack.zeroclaw), "eval", "run", "--config", str(run.config), "--format", "json"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    errors = {case["name"]: case["error"] for case in report["cases"] if case["error"]}
    assert errors == {}, errors
    assert report["errors"] == [], report["errors"]
    found = failing(report)
    if run.passes:
        assert found == {}, json.dumps(found, indent=2)
        assert result.returncode == 0
        return
    assert sorted(found) == sorted(expected.check for expected in run.fails), json.dumps(
        found, indent=2
    )
    for expected in run.fails:
        details = found[expected.check]
        assert any(expected.detail in detail for detail in details), (expected, details)
    assert result.returncode == 1
