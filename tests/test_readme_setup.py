"""The README's set-up commands: one virtual environment, and the test command CI runs."""

from __future__ import annotations

import re

from .conftest import PROJECT

README = (PROJECT / "README.md").read_text(encoding="utf-8")
SETUP = README.split("## Set-up", 1)[1].split("\n## ", 1)[0]
COMMANDS = re.findall(r"```sh\n(.*?)\n```", SETUP, re.DOTALL)


def test_the_set_up_commands_make_the_environment_only_when_it_is_missing() -> None:
    assert len(COMMANDS) == 2
    for command in COMMANDS:
        made = command.count("python3 -m venv .venv")
        assert made == 1 and command.startswith("[ -d .venv ] || python3 -m venv .venv && ")


def test_ci_runs_the_test_command_the_readme_gives_with_the_example_plugins() -> None:
    test_command = COMMANDS[1].rsplit(" && ", 1)[1]
    assert test_command == ".venv/bin/python -m pytest -n auto"
    ci = (PROJECT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"\n{test_command} --junitxml" in ci
    for plugin in ("plugins/zeroclaw-eval-junit", "plugins/zeroclaw-eval-json-response"):
        assert f"-e '{plugin}[test]'" in COMMANDS[1]
        assert plugin in ci
