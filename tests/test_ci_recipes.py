"""The CI recipes the project ships run what they say: ``.pre-commit-hooks.yaml`` and
the README's GitHub workflow are parsed as YAML, and every ``zeroclaw`` command in
them is run for real."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import yaml

from .conftest import PROJECT, zeroclaw


def test_the_pre_commit_hook_runs_zeroclaw_eval_check() -> None:
    hooks: list[dict[str, Any]] = yaml.safe_load(
        (PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    )
    assert [hook["id"] for hook in hooks] == ["zeroclaw-eval-check"]
    hook = hooks[0]
    assert hook["language"] == "python"  # pre-commit installs this package for it
    assert hook["pass_filenames"] is False  # the command takes no file arguments
    argv = shlex.split(hook["entry"])
    assert argv == ["zeroclaw", "eval", "check"]
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
