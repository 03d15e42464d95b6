"""Helpers for testing plugins: opt-in, imported only by tests.

A plugin author tests a family, formatter, mode or tool the way the harness runs
it: registered next to the built-ins, admitted like a built-in, run through the
real CLI. Nothing here patches the harness; plugin objects reach the CLI through
click's ``obj`` (:class:`~zeroclaw_eval.cli.InProcessPlugins`).

::

    from zeroclaw_eval import testing
    import my_plugin

    def test_refuses_a_bad_parameter(tmp_path):
        case = testing.fixture({"my_family": "bad"})
        testing.write_fixture(tmp_path, case)
        result = testing.run_cli(["eval", "run", "--suite", str(tmp_path)], my_plugin)
        assert result.exit_code == 1
        assert "expects.my_family" in result.stderr
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zeroclaw_eval.case.admission import Case, admit_data
from zeroclaw_eval.history.recorder import NO_HISTORY_ENV
from zeroclaw_eval.plugins.manager import DISABLE_AUTOLOAD_ENV, PluginManager, get_plugin_manager
from zeroclaw_eval.plugins.registry import Registry


def plugin_manager(*plugins: object, entry_points: bool = False) -> PluginManager:
    """A fresh manager: the built-ins, then ``plugins`` (modules or objects with hook
    implementations). Installed entry points are left out unless ``entry_points``,
    and the ``ZEROCLAW_EVAL_*`` variables of the calling environment are ignored,
    so a test sees the same plugins on every machine.
    """
    return get_plugin_manager(plugins=plugins, load_entry_points=entry_points, environ={})


def make_registry(*plugins: object, entry_points: bool = False) -> Registry:
    """The :class:`Registry` of :func:`plugin_manager` ``(*plugins)``: what admission
    and the runner use. Raises :class:`~zeroclaw_eval.errors.PluginLoadError` when a
    plugin registers something invalid or a name another plugin has.
    """
    return Registry.from_plugin_manager(plugin_manager(*plugins, entry_points=entry_points))


def admit(data: Mapping[str, Any], *plugins: object, source: str = "case.json") -> Case:
    """Admit one fixture document with the built-ins plus ``plugins``, in replay mode.

    Raises :class:`~zeroclaw_eval.errors.AdmissionError`, whose ``field`` names the
    refused field, exactly as ``zeroclaw eval run`` would report it.
    """
    registry = make_registry(*plugins)
    return admit_data(dict(data), registry, registry.modes["replay"].obj, source=source)


def fixture(
    expects: Mapping[str, Any],
    *,
    response: str = "done",
    tool_calls: Sequence[tuple[str, Mapping[str, Any]]] = (),
    name: str = "plugin-test-case",
    user_input: str = "Go",
) -> dict[str, Any]:
    """A one-turn replay fixture: optionally one step with ``tool_calls`` (each
    ``(tool, arguments)``, dispatched for real), then the text ``response``.
    """
    steps: list[dict[str, Any]] = []
    if tool_calls:
        calls = [
            {"id": f"call_{index}", "name": tool, "arguments": dict(arguments)}
            for index, (tool, arguments) in enumerate(tool_calls, 1)
        ]
        steps.append({"response": {"type": "tool_calls", "tool_calls": calls}})
    steps.append({"response": {"type": "text", "content": response}})
    return {
        "model_name": name,
        "turns": [{"user_input": user_input, "steps": steps}],
        "expects": dict(expects),
    }


def write_fixture(
    directory: str | os.PathLike[str], data: Mapping[str, Any] | str, name: str = "case.json"
) -> Path:
    """Write a fixture (a document, or raw text) into ``directory`` (a path or a
    ``str``; created if missing) and return its path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, indent=2)
    path.write_text(text, encoding="utf-8")
    return path


@dataclass(frozen=True)
class CliResult:
    """What an invocation of ``zeroclaw`` left: exit code, stdout and stderr."""

    exit_code: int
    stdout: str
    stderr: str


def run_cli(
    args: Sequence[str | os.PathLike[str]],
    *plugins: object,
    entry_points: bool = False,
    env: Mapping[str, str] | None = None,
) -> CliResult:
    """Run ``zeroclaw ARGS`` in this process with click's ``CliRunner``.

    ``plugins`` are registered after the built-ins, as if installed. Installed
    entry points are not loaded unless ``entry_points`` (so an editable install of
    the plugin under test does not register it twice). ``env`` adds variables for
    the duration of the call. ``args`` may hold paths as well as strings. A run
    keeps no history unless ``--history`` asks for one (or ``env`` sets
    ``ZEROCLAW_EVAL_NO_HISTORY=0``): tests do not write into the project.
    """
    from click.testing import CliRunner

    from zeroclaw_eval.cli import main
    from zeroclaw_eval.cli.common import InProcessPlugins

    variables = {NO_HISTORY_ENV: "1", **(env or {})}
    if not entry_points:
        variables[DISABLE_AUTOLOAD_ENV] = "1"
    try:  # click < 8.2 mixes stderr into stdout unless told not to
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg,unused-ignore]
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(
        main,
        [os.fspath(arg) for arg in args],
        obj=InProcessPlugins(tuple(plugins)),
        env=variables,
        catch_exceptions=False,
    )
    return CliResult(result.exit_code, result.stdout, result.stderr)


def zeroclaw_command() -> list[str]:
    """The installed ``zeroclaw`` console script, preferring this interpreter's."""
    beside = Path(sys.executable).parent / ("zeroclaw.exe" if os.name == "nt" else "zeroclaw")
    found = str(beside) if beside.exists() else shutil.which("zeroclaw")
    if found is None:
        raise FileNotFoundError("the zeroclaw console script is not installed")
    return [found]


def run_zeroclaw(
    args: Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> CliResult:
    """Run the real ``zeroclaw`` console script as a subprocess: installed entry
    points load exactly as they do for users. ``env`` is added to this process's
    environment. ``args`` and ``cwd`` may be paths or strings. As with
    :func:`run_cli`, a run keeps no history unless asked.
    """
    completed = subprocess.run(
        [*zeroclaw_command(), *(os.fspath(arg) for arg in args)],
        cwd=cwd,
        env={**os.environ, NO_HISTORY_ENV: "1", **(env or {})},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )
    return CliResult(completed.returncode, completed.stdout, completed.stderr)
