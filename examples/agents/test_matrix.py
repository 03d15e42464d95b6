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


#: The bugs every stack's broken variants put where a team's would sit, one config each.
VARIANTS = {"rewriting", "lying", "lazy", "padding", "truncating", "forgetful"}


def test_every_stack_has_an_honest_agent_and_each_of_the_six_broken_variants() -> None:
    assert STACKS, "no stack under examples/agents/"
    for stack in STACKS.values():
        configs = {run.config.stem: run for run in stack.runs}
        assert configs["own"].passes, f"{stack.name}: its own tools must pass"
        if "served" in configs:
            assert configs["served"].passes, f"{stack.name}: served tools must pass"
        for variant in VARIANTS:
            assert variant in configs, f"{stack.name}: no {variant}.toml"
            assert not configs[variant].passes, f"{stack.name}: {variant} must fail"


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
        # What passes for this honest agent, eval check --strict must not call
        # impossible (a check that cannot pass for a correct agent is a bug).
        check = subprocess.run(
            [str(stack.zeroclaw), "eval", "check", "--strict", "--config", str(run.config)],
            cwd=PROJECT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert (check.returncode, check.stderr.count("Error:")) == (0, 0), check.stderr
        return
    assert sorted(found) == sorted(expected.check for expected in run.fails), json.dumps(
        found, indent=2
    )
    for expected in run.fails:
        details = found[expected.check]
        assert any(expected.detail in detail for detail in details), (expected, details)
    assert result.returncode == 1
