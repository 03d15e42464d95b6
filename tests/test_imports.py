"""What importing the CLI, and replaying a suite through it, may import.

Structural, not timed: a fresh interpreter imports ``zeroclaw_eval.cli``, runs
``eval run`` in replay mode in-process, and reports ``sys.modules`` after each
step. A replay run needs no HTTP client, and importing the CLI imports no plugin:
plugins are imported when a command builds its plugin manager, never as a side
effect of an import. Each module kept out is start-up time every run saves.

The project modules a one-case replay (W1 of benchmarks/run.py) imports are
pinned, with the run history on (the default) and off: a module that joins the
cold path shows up here as a one-line change to review, with what it costs.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

import zeroclaw_eval
from zeroclaw_eval.history.recorder import NO_HISTORY_ENV
from zeroclaw_eval.hookspecs import PROJECT_NAME

from .conftest import PROJECT

REGRESSION = PROJECT / "evals" / "regression"

#: OpenTelemetry, OpenInference and the harness's own trace reading: installed with
#: the test extra, imported by no replay, and not even by `eval import`.
TRACING = ("opentelemetry", "openinference", "zeroclaw_eval.traces", "zeroclaw_eval.run.importing")

# The standard library's HTTP client, and the live mode's client built on it.
HTTP_CLIENT = ("http.client", "urllib.request", "ssl", "zeroclaw_eval.builtin.live_client")

#: The project modules ``zeroclaw eval run`` on one replay case imports (built-in
#: plugins only), with ``--no-history``.
W1_MODULES = frozenset(
    {
        "zeroclaw_eval",
        "zeroclaw_eval.agents",
        "zeroclaw_eval.agents.base",
        "zeroclaw_eval.agents.dialect",
        "zeroclaw_eval.agents.loop",
        "zeroclaw_eval.builtin",
        # Of the default family modules, only the one of W1's response_contains is
        # imported: the others are registered by name and imported on first use.
        "zeroclaw_eval.builtin.dialects",
        "zeroclaw_eval.builtin.echo",
        "zeroclaw_eval.builtin.github",
        "zeroclaw_eval.builtin.json",
        "zeroclaw_eval.builtin.live",
        # The otel formatter's plugin module is registered on every run; what makes
        # its spans (builtin.otel_spans, OpenTelemetry) only when the report is asked for.
        "zeroclaw_eval.builtin.otel",
        "zeroclaw_eval.builtin.reference",
        "zeroclaw_eval.builtin.replay",
        "zeroclaw_eval.builtin.response",
        "zeroclaw_eval.builtin.text",
        "zeroclaw_eval.case",
        "zeroclaw_eval.case.admission",
        # Every fixture's scripted faults are admitted (cheap: no fault, no work).
        "zeroclaw_eval.case.faults",
        "zeroclaw_eval.case.fixture",
        "zeroclaw_eval.case.offer",
        "zeroclaw_eval.case.suite",
        "zeroclaw_eval.cli",
        "zeroclaw_eval.cli.common",
        "zeroclaw_eval.cli.run",
        "zeroclaw_eval.config",
        "zeroclaw_eval.errors",
        "zeroclaw_eval.grading",
        "zeroclaw_eval.grading.family",
        "zeroclaw_eval.grading.record",
        "zeroclaw_eval.history",
        "zeroclaw_eval.history.recorder",
        "zeroclaw_eval.hookspecs",
        "zeroclaw_eval.modes",
        "zeroclaw_eval.modes.base",
        "zeroclaw_eval.modes.notes",
        "zeroclaw_eval.plugins",
        "zeroclaw_eval.plugins.manager",
        "zeroclaw_eval.plugins.registry",
        "zeroclaw_eval.protocol",
        "zeroclaw_eval.report",
        "zeroclaw_eval.report.formatter",
        "zeroclaw_eval.report.model",
        "zeroclaw_eval.run",
        "zeroclaw_eval.run.runner",
        "zeroclaw_eval.run.session",
        "zeroclaw_eval.run.sessions",
        "zeroclaw_eval.run.signals",
        "zeroclaw_eval.run.supervise",
        "zeroclaw_eval.util",
        "zeroclaw_eval.util.distinfo",
        # The records every case makes are frozen dataclasses made quickly.
        "zeroclaw_eval.util.frozen",
        "zeroclaw_eval.util.paths",
        # Every run asks whether it holds a provider key to keep out of what it writes.
        "zeroclaw_eval.util.redact",
        "zeroclaw_eval.util.strictjson",
        # Tallies the harness's first-use set-up, which a case's time leaves out.
        "zeroclaw_eval.util.warmup",
        "zeroclaw_eval.util.wording",
        "zeroclaw_eval.version",
        "zeroclaw_eval.workspace",
    }
)

#: What the default run history adds: the store (and sqlite3), and the provenance
#: of the run (the git commit, asked only inside a work tree).
W1_HISTORY_MODULES = frozenset({"zeroclaw_eval.history.provenance", "zeroclaw_eval.history.store"})

W1_PROBE = """
import json, sys
import zeroclaw_eval.cli
args = ["eval", "run", "--suite", *sys.argv[1:]]
try:
    zeroclaw_eval.cli.main(args, standalone_mode=False)
except SystemExit as exc:
    assert exc.code == 0, exc.code
project = sorted(m for m in sys.modules if m.split(".")[0] == "zeroclaw_eval")
otel = sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry")
print(json.dumps({"project": project, "subprocess": "subprocess" in sys.modules, "otel": otel}))
"""


@pytest.fixture(scope="module")
def w1_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """W1: one case, one turn of scripted text, one response_contains; no configuration."""
    suite = tmp_path_factory.mktemp("w1") / "w1"
    suite.mkdir()
    case = {
        "model_name": "greet-0",
        "turns": [
            {
                "user_input": "Say hello to visitor 0",
                "steps": [{"response": {"type": "text", "content": "Hello, visitor 0!"}}],
            }
        ],
        "expects": {"response_contains": ["visitor 0"]},
    }
    (suite / "case.json").write_text(json.dumps(case), encoding="utf-8")
    return suite


def w1_imports(suite: Path, *options: str) -> dict[str, Any]:
    """What a fresh interpreter imports to run W1 (built-in plugins only): the project's
    modules, and whether :mod:`subprocess` is among the standard library's."""
    env = {key: value for key, value in os.environ.items() if key != NO_HISTORY_ENV}
    env["ZEROCLAW_EVAL_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", W1_PROBE, suite.name, *options],
        cwd=suite.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    imported: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return imported


def test_a_w1_replay_without_history_imports_exactly_the_pinned_modules(w1_suite: Path) -> None:
    assert sorted(w1_imports(w1_suite, "--no-history")["project"]) == sorted(W1_MODULES)


def test_the_default_history_adds_only_its_store_and_provenance(w1_suite: Path) -> None:
    imported = w1_imports(w1_suite)
    assert (w1_suite.parent / ".zeroclaw" / "history.sqlite").is_file()  # it was on
    assert sorted(imported["project"]) == sorted(W1_MODULES | W1_HISTORY_MODULES)
    # Outside a git work tree no git runs, so nothing imports subprocess to start it.
    assert imported["subprocess"] is False


#: What an otel report, and only it, makes a run import: the spans and OpenTelemetry.
OTEL_REPORT_MODULES = frozenset({"zeroclaw_eval.builtin.otel_spans"})


def test_a_report_that_does_not_trace_imports_nothing_of_opentelemetry(
    w1_suite: Path, tmp_path: Path
) -> None:
    imported = w1_imports(w1_suite, "--no-history", "--report", f"json:{tmp_path / 'r.json'}")
    assert imported["otel"] == []
    assert not OTEL_REPORT_MODULES & set(imported["project"])
    # Nor does the run keep a trace: no exchange is watched.
    assert "zeroclaw_eval.run.observe" not in imported["project"]


def test_an_otel_report_imports_opentelemetry_when_it_is_asked_for(
    w1_suite: Path, tmp_path: Path
) -> None:
    report = tmp_path / "r.otlp.jsonl"
    imported = w1_imports(w1_suite, "--no-history", "--report", f"otel:{report}")
    assert report.is_file()
    assert OTEL_REPORT_MODULES | {"zeroclaw_eval.run.observe"} <= set(imported["project"])
    assert "opentelemetry.sdk.trace" in imported["otel"]


PROBE = """
import json, sys
import zeroclaw_eval.cli
after_import = sorted(sys.modules)
try:
    zeroclaw_eval.cli.main(["eval", "run", "--suite", sys.argv[1]], standalone_mode=False)
    code = 0
except SystemExit as exc:
    code = exc.code
print(json.dumps({"after_import": after_import, "after_run": sorted(sys.modules), "exit": code}))
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``sys.modules`` of a fresh interpreter after importing the CLI, then after a replay run."""
    cwd = tmp_path_factory.mktemp("probe")  # no zeroclaw.toml or pyproject.toml here
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(REGRESSION)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def plugin_packages() -> list[str]:
    """Top-level packages of every installed ``zeroclaw_eval`` entry point, plus the
    built-in plugin modules: none of them is needed to import the CLI.
    """
    installed = {ep.module.split(".")[0] for ep in entry_points(group=PROJECT_NAME)}
    return sorted(installed | {"zeroclaw_eval.builtin", "zeroclaw_eval_junit"})


def loaded(modules: list[str], names: tuple[str, ...] | list[str]) -> list[str]:
    """The modules in ``modules`` that are one of ``names`` or inside one of them."""
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in names)]


def test_the_probe_really_ran_a_replay_suite(probe: dict[str, Any]) -> None:
    # Otherwise the assertions below could pass because nothing was imported.
    assert probe["exit"] == 0
    assert "zeroclaw_eval.builtin.replay" in probe["after_run"]
    assert "zeroclaw_eval.run.runner" in probe["after_run"]


def test_importing_the_cli_imports_no_plugin(probe: dict[str, Any]) -> None:
    assert loaded(probe["after_import"], plugin_packages()) == []


def test_importing_the_cli_imports_neither_pydantic_nor_the_harness(probe: dict[str, Any]) -> None:
    # cli.py imports the harness inside its commands, so that `zeroclaw --help` and
    # usage errors answer at once; an eager import in the package would undo that.
    assert loaded(probe["after_import"], ["pydantic", "zeroclaw_eval.case.admission"]) == []


def test_every_public_name_is_importable_from_the_package() -> None:
    # The package imports its public names lazily, from a table kept beside __all__.
    assert sorted(zeroclaw_eval._MODULE_OF) == sorted(zeroclaw_eval.__all__)
    for name in zeroclaw_eval.__all__:
        module = importlib.import_module(zeroclaw_eval._MODULE_OF[name])
        assert getattr(zeroclaw_eval, name) is getattr(module, name), name
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = zeroclaw_eval.no_such_name  # type: ignore[attr-defined]


def test_importing_the_cli_imports_no_http_client(probe: dict[str, Any]) -> None:
    assert loaded(probe["after_import"], HTTP_CLIENT) == []


def test_a_replay_run_imports_no_http_client(probe: dict[str, Any]) -> None:
    assert loaded(probe["after_run"], HTTP_CLIENT) == []


def test_a_replay_run_imports_nothing_of_tracing(probe: dict[str, Any]) -> None:
    assert loaded(probe["after_run"], TRACING) == []


IMPORT_PROBE = """
import json, sys
import zeroclaw_eval.cli
try:
    zeroclaw_eval.cli.main(["eval", "import", sys.argv[1], "--out", sys.argv[2]],
                           standalone_mode=False)
    code = 0
except SystemExit as exc:
    code = exc.code
print(json.dumps({"modules": sorted(sys.modules), "exit": code}))
"""


def test_eval_import_reads_traces_without_an_opentelemetry_package(tmp_path: Path) -> None:
    from .otlp_spans import chat, export, text, write_lines

    trace = "5b8efff798038103d269b633813fc60c"
    answered = chat(trace, [text("user", "Hi")], text("assistant", "Hello."), start=1)
    write_lines(tmp_path / "t.jsonl", export([answered]))
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, "t.jsonl", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["exit"] == 0
    assert (tmp_path / "out" / f"trace-{trace}.json").is_file()
    assert "zeroclaw_eval.traces.genai" in result["modules"]  # it did read the trace
    assert loaded(result["modules"], ["opentelemetry", "openinference"]) == []


@pytest.mark.parametrize("command", [["eval", "run"], ["eval", "check"], ["eval", "plugins"]])
def test_a_command_gives_the_cyclic_collector_back(command: list[str]) -> None:
    # The CLI pauses the collector while it builds the suite; an in-process
    # invocation must leave it running, and leave it off if the host turned it off.
    from click.testing import CliRunner

    from zeroclaw_eval.cli import main

    args = [*command, "--suite", str(REGRESSION)] if command[1] != "plugins" else command
    was_enabled = gc.isenabled()
    try:
        for host_enabled in (True, False):
            set_collector(host_enabled)
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 0, result.output
            assert gc.isenabled() is host_enabled
    finally:
        set_collector(was_enabled)


def set_collector(enabled: bool) -> None:
    if enabled:
        gc.enable()
    else:
        gc.disable()
