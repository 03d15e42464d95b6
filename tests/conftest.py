"""Shared fixtures: a registry with every installed plugin, fixture-writing helpers, and
a runner for the installed ``zeroclaw`` console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from zeroclaw_eval import Registry, RunMode, get_plugin_manager
from zeroclaw_eval.history.recorder import NO_HISTORY_ENV

TESTS = Path(__file__).parent
PROJECT = TESTS.parent

# No run of the tests writes a history into the project: the tests of the history
# give --history a temporary file, or unset this in a temporary directory.
os.environ[NO_HISTORY_ENV] = "1"


def project_histories() -> dict[str, tuple[int, int]]:
    """Every history file in the project (CI's own ``zeroclaw eval run`` may have
    made one before the tests), with its size and modification time."""
    found = [*PROJECT.glob(".zeroclaw/*"), *PROJECT.glob("evals/*/.zeroclaw/*")]
    return {str(path): (path.stat().st_size, path.stat().st_mtime_ns) for path in found}


HISTORIES_AT_START = project_histories()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if a test wrote a history into the project."""
    if project_histories() != HISTORIES_AT_START:
        sys.stderr.write("\nError: the tests wrote a run history into the project\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The console script pip installed next to this interpreter: the real entry point.
ZEROCLAW = Path(sys.executable).with_name("zeroclaw")


def zeroclaw(
    *args: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``zeroclaw <args>`` as a real subprocess and capture its output as text.

    ``env`` adds to the inherited environment.
    """
    assert ZEROCLAW.is_file(), f"console script not installed at {ZEROCLAW}"
    return subprocess.run(
        [str(ZEROCLAW), *map(str, args)],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )


def zeroclaw_all(
    runs: dict[str, tuple[Sequence[str | Path], Path | None]],
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Run several ``zeroclaw`` invocations (name -> (args, cwd)) side by side."""
    assert ZEROCLAW.is_file(), f"console script not installed at {ZEROCLAW}"
    started = {
        name: (
            [str(ZEROCLAW), *map(str, args)],
            subprocess.Popen(
                [str(ZEROCLAW), *map(str, args)],
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
            ),
        )
        for name, (args, cwd) in runs.items()
    }
    done = {}
    for name, (argv, process) in started.items():
        stdout, stderr = process.communicate(timeout=120)
        done[name] = subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)
    return done


# Property tests: bounded and reproducible in CI (the same examples on every run, no
# example database); HYPOTHESIS_PROFILE=thorough searches further, for a local hunt.
settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True, database=None)
settings.register_profile("thorough", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def registry() -> Registry:
    return Registry.from_plugin_manager(get_plugin_manager())


@pytest.fixture(scope="session")
def replay(registry: Registry) -> RunMode:
    return registry.modes["replay"].obj


def echo_case(**overrides: Any) -> dict[str, Any]:
    """A valid one-turn fixture that echoes "hello"; keys in ``overrides`` replace its own."""
    case: dict[str, Any] = {
        "model_name": "echo-hello",
        "turns": [
            {
                "user_input": "Echo hello",
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [
                                {"id": "c1", "name": "echo", "arguments": {"message": "hello"}}
                            ],
                        }
                    },
                    {"response": {"type": "text", "content": "The echo said: hello"}},
                ],
            }
        ],
        "expects": {
            "response_contains": ["hello"],
            "exact_tool_calls": 1,
            "tool_results_contain": [{"tool": "echo", "needle": "hello"}],
        },
    }
    case.update(overrides)
    return case


@pytest.fixture
def write_case(tmp_path: Path) -> Callable[..., Path]:
    """Write a fixture into ``tmp_path/suite`` and return its path."""
    suite = tmp_path / "suite"
    suite.mkdir()

    def write(data: Any, name: str = "case.json") -> Path:
        path = suite / name
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        path.write_text(text, encoding="utf-8")
        return path

    return write
