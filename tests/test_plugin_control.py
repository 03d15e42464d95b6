"""Plugins from installed packages: listed, used end to end, blocked before import,
and a broken one stops the run with an error naming it.

Tests marked with the ``installed`` fixture need the two example plugins
installed (``pip install -e plugins/zeroclaw-eval-junit -e
plugins/zeroclaw-eval-json-response``, as ``.ci/run`` does). Without them they are
skipped locally and fail in CI, where a skip would hide that the entry-point path
went untested.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest

from zeroclaw_eval import Family, RunRecord, hookimpl
from zeroclaw_eval.report.model import CheckResult
from zeroclaw_eval.testing import fixture, run_cli, run_zeroclaw, write_fixture

from .conftest import PROJECT

EXAMPLE_PLUGINS = {
    "zeroclaw-eval-junit": PROJECT / "plugins" / "zeroclaw-eval-junit",
    "zeroclaw-eval-json-response": PROJECT / "plugins" / "zeroclaw-eval-json-response",
}
AUTOLOAD_OFF = {"ZEROCLAW_EVAL_DISABLE_PLUGIN_AUTOLOAD": "1"}


@pytest.fixture(scope="session")
def installed() -> None:
    """Require the example plugin packages: fail in CI, skip elsewhere."""
    missing = []
    for name, path in EXAMPLE_PLUGINS.items():
        try:
            distribution(name)
        except PackageNotFoundError:
            missing.append(f"pip install -e {path.relative_to(PROJECT)}")
    if missing:
        message = "example plugins not installed: " + "; ".join(missing)
        if os.environ.get("CI") or os.environ.get("ZEROCLAW_EVAL_REQUIRE_PLUGINS"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def json_suite(tmp_path: Path) -> Path:
    """A one-case suite that only the installed response_json family can admit."""
    suite = tmp_path / "suite"
    expects = {"response_json": {"/status": "ok"}, "tools_used": ["echo"]}
    case = fixture(expects, response='{"status": "ok"}', tool_calls=[("echo", {"message": "x"})])
    write_fixture(suite, case)
    return suite


# --- installed example plugins --------------------------------------------------


def test_installed_plugins_are_listed_with_distribution_and_version(installed: None) -> None:
    result = run_zeroclaw(["eval", "plugins", "--json"])
    assert result.exit_code == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)["plugins"]}
    junit = rows["junit"]
    assert junit["builtin"] is False
    assert junit["distribution"] == "zeroclaw-eval-junit"
    assert junit["version"] == distribution("zeroclaw-eval-junit").version
    assert junit["entry_point"] == "zeroclaw_eval_junit"
    assert junit["provides"] == {
        "families": [],
        "formatters": ["junit"],
        "modes": [],
        "tools": [],
        "agents": [],
        "dialects": [],
    }
    assert rows["response_json"]["provides"]["families"] == ["response_json"]
    assert rows["echo"]["builtin"] is True and rows["echo"]["distribution"] is None

    text = run_zeroclaw(["eval", "plugins"]).stdout
    assert "echo (built-in)\n    tools: echo\n" in text
    version = distribution("zeroclaw-eval-junit").version
    assert f"junit (zeroclaw-eval-junit {version}, entry point zeroclaw_eval_junit)" in text
    assert "    formatters: junit\n" in text


def test_installed_plugins_work_end_to_end(installed: None, json_suite: Path) -> None:
    result = run_zeroclaw(["eval", "run", "--suite", str(json_suite), "--format", "junit"])
    assert result.exit_code == 0, result.stderr
    suite = ET.fromstring(result.stdout).find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "0", "0")


def test_a_signal_a_plugin_swallowed_while_loading_still_stops_the_run_as_interrupted(
    tmp_path: Path,
) -> None:
    """pydantic-core turns the interruption a signal raises while it builds a
    validator into a SchemaError of its own; this plugin does the same on import. The
    run must end as interrupted by the signal, not as a plugin that failed to load."""
    swallowing = (
        "import os, signal, time\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(5)\n"
        "except KeyboardInterrupt as exc:\n"
        "    raise RuntimeError(f'swallowed {exc}') from None\n"
    )
    site = pip_installed_plugin(tmp_path, "swallowing", swallowing)
    result = run_zeroclaw(["eval", "run"], cwd=PROJECT, env=with_broken(site))
    assert result.exit_code == 128 + signal.SIGTERM
    assert result.stderr == (
        "Error: interrupted by SIGTERM while the harness and its plugins loaded: "
        "no report was written\n"
    )


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["-p", "no:response_json"], {}),
        ([], {"ZEROCLAW_EVAL_DISABLE_PLUGINS": "junit, response_json"}),
        ([], AUTOLOAD_OFF),
    ],
    ids=["-p no:NAME", "DISABLE_PLUGINS", "DISABLE_PLUGIN_AUTOLOAD"],
)
def test_a_blocked_family_fails_closed_as_an_unknown_key(
    installed: None, json_suite: Path, args: list[str], env: dict[str, str]
) -> None:
    result = run_zeroclaw(["eval", "run", "--suite", str(json_suite), *args], env=env)
    assert result.exit_code == 1
    assert f"{json_suite / 'case.json'}: expects.response_json: unknown key" in result.stderr
    assert "Traceback" not in result.stderr
    listed = json.loads(run_zeroclaw(["eval", "plugins", "--json", *args], env=env).stdout)
    assert "response_json" not in {row["name"] for row in listed["plugins"]}


def test_blocking_one_plugin_keeps_the_others(installed: None, json_suite: Path) -> None:
    result = run_zeroclaw(["eval", "run", "--suite", str(json_suite), "-p", "no:junit"])
    assert result.exit_code == 0, result.stderr
    result = run_zeroclaw(
        ["eval", "run", "--suite", str(json_suite), "-p", "no:junit", "--format", "junit"]
    )
    assert result.exit_code == 2
    assert "unknown format 'junit'" in result.stderr
    listed = json.loads(run_zeroclaw(["eval", "plugins", "--json", "-p", "no:junit"]).stdout)
    assert listed["blocked"] == ["junit"]


# --- a broken plugin package, pip-installed for the test ----------------------------


def pip_installed_plugin(root: Path, name: str, module_source: str) -> Path:
    """A directory holding a pip-installed plugin ``zeroclaw-eval-NAME`` whose module
    is ``module_source``, registered as the entry point ``NAME``."""
    package = root / f"zeroclaw-eval-{name}"
    (package / "src" / f"zeroclaw_eval_{name}").mkdir(parents=True)
    (package / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [build-system]
            requires = ["setuptools>=70.1"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "zeroclaw-eval-{name}"
            version = "0.0.1"

            [project.entry-points.zeroclaw_eval]
            {name} = "zeroclaw_eval_{name}"
            """
        )
    )
    (package / "src" / f"zeroclaw_eval_{name}" / "__init__.py").write_text(module_source)
    site = root / "site"
    # --no-build-isolation and --no-index: offline, and about two seconds.
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    subprocess.run(
        [*pip, "--no-build-isolation", "--target", str(site), str(package)],
        check=True,
        capture_output=True,
    )
    return site


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding a pip-installed plugin whose module raises on import."""
    root = tmp_path_factory.mktemp("broken")
    return pip_installed_plugin(root, "broken", 'raise RuntimeError("broken on purpose")\n')


def with_broken(site: Path, **extra: str) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": path, **extra}


def test_a_broken_plugin_stops_the_run_naming_distribution_and_entry_point(
    broken_site: Path,
) -> None:
    for command in (["eval", "run"], ["eval", "check"], ["eval", "plugins"]):
        result = run_zeroclaw(command, cwd=PROJECT, env=with_broken(broken_site))
        assert result.exit_code == 1, command
        assert result.stdout == ""
        assert result.stderr == (
            "Error: plugin 'broken' (entry point broken = zeroclaw_eval_broken, "
            "distribution zeroclaw-eval-broken) failed to load: "
            "RuntimeError: broken on purpose\n"
        )


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["-p", "no:broken"], {}),
        ([], {"ZEROCLAW_EVAL_DISABLE_PLUGINS": "broken"}),
        ([], AUTOLOAD_OFF),
    ],
    ids=["-p no:NAME", "DISABLE_PLUGINS", "DISABLE_PLUGIN_AUTOLOAD"],
)
def test_blocking_happens_before_import(
    broken_site: Path, args: list[str], env: dict[str, str]
) -> None:
    """The broken module raises when imported: a green run proves it never was."""
    result = run_zeroclaw(["eval", "run", *args], cwd=PROJECT, env=with_broken(broken_site, **env))
    assert result.exit_code == 0, result.stderr
    assert "cases passed" in result.stdout


# --- in-process plugins, blocking and its option -----------------------------------


class Shouts(Family[bool]):
    """The final response is in capitals."""

    name = "response_shouts"
    params = bool

    def grade(self, params: bool, run: RunRecord) -> list[CheckResult]:
        final = run.final_response or ""
        ok = bool(final) and final.isupper() == params
        return [CheckResult(self.name, ok, f"observed {final!r}")]


class ShoutPlugin:
    @hookimpl
    def zeroclaw_eval_register_families(self, register: Callable[[Family[bool]], None]) -> None:
        register(Shouts())


def test_a_family_of_a_blocked_plugin_is_an_unknown_key(tmp_path: Path) -> None:
    plugin = ShoutPlugin()
    write_fixture(tmp_path, fixture({"response_shouts": True}, response="HELLO"))
    suite = ["eval", "run", "--suite", str(tmp_path)]
    assert run_cli(suite, plugin).exit_code == 0
    name = f"no:{id(plugin)}"  # pluggy's name for an unnamed plugin object
    result = run_cli([*suite, "-p", name], plugin)
    assert result.exit_code == 1
    assert "expects.response_shouts: unknown key: no such expectation family" in result.stderr


def test_builtins_can_be_blocked_too(tmp_path: Path) -> None:
    expects = {"tools_used": ["echo"], "all_tools_succeeded": True}
    write_fixture(tmp_path, fixture(expects, tool_calls=[("echo", {})]))
    suite = ["eval", "run", "--suite", str(tmp_path)]
    assert run_cli(suite).exit_code == 0
    result = run_cli([*suite, "-p", "no:echo"])
    assert result.exit_code == 1
    assert "unknown tool 'echo'" in result.stdout
    result = run_cli(suite, env={"ZEROCLAW_EVAL_DISABLE_PLUGINS": "tools"})
    assert result.exit_code == 1
    assert "expects.tools_used: unknown key" in result.stderr


@pytest.mark.parametrize("value", ["echo", "no:", "yes:echo"])
def test_p_takes_only_no_name(value: str) -> None:
    result = run_cli(["eval", "plugins", "-p", value])
    assert result.exit_code == 2
    assert "expected no:NAME" in result.stderr


def test_every_command_takes_p() -> None:
    for command in ("run", "check", "plugins"):
        result = run_cli(["eval", command, "--help"])
        assert "-p no:NAME" in result.stdout, command


# --- saying what blocking did -------------------------------------------------------


def test_blocking_a_name_no_plugin_has_warns_on_stderr(tmp_path: Path) -> None:
    write_fixture(tmp_path, fixture({"response_contains": ["hello"]}, response="hello"))
    suite = ["eval", "run", "--suite", str(tmp_path), "--format", "json"]

    typo = run_cli([*suite, "-p", "no:jsno"])
    real = run_cli([*suite, "-p", "no:echo"])

    assert typo.exit_code == 0, typo.stderr
    assert typo.stderr.startswith(
        "Warning: -p no:jsno: no plugin is named 'jsno', so it blocks nothing (plugins: "
    )
    assert "json" in typo.stderr.splitlines()[0]
    json.loads(typo.stdout)  # stdout still holds the document alone
    assert "Warning" not in real.stderr


def test_blocking_an_installed_plugin_is_not_a_typo_even_without_autoload(
    installed: None, json_suite: Path
) -> None:
    result = run_zeroclaw(
        ["eval", "run", "--suite", str(json_suite), "-p", "no:junit"], env=AUTOLOAD_OFF
    )
    assert "Warning" not in result.stderr


def test_an_unknown_family_names_the_blocked_plugins(installed: None, json_suite: Path) -> None:
    result = run_zeroclaw(["eval", "run", "--suite", str(json_suite), "-p", "no:response_json"])
    assert result.exit_code == 1
    line = next(x for x in result.stderr.splitlines() if "expects.response_json" in x)
    assert line.endswith("; blocked plugins: response_json)")


def test_record_with_text_blocked_says_the_plugin_is_blocked(tmp_path: Path) -> None:
    write_fixture(tmp_path, fixture({"response_contains": ["hello"]}, response="hello"))
    result = run_cli(
        ["eval", "record", "--suite", str(tmp_path), "--out", str(tmp_path / "o"), "-p", "no:text"]
    )
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: record prints its report with the 'text' formatter, and the plugin 'text' that "
        "provides it is blocked (-p no:text or ZEROCLAW_EVAL_DISABLE_PLUGINS)\n"
    )
    assert not (tmp_path / "o").exists()


def test_a_deferred_family_that_fails_to_load_stops_the_run_naming_it(tmp_path: Path) -> None:
    """Its module is imported while the suite loads; the error is the plugin's, said
    as such (no signal came: nothing to mistake it for an interrupt)."""
    deferring = (
        "import importlib\n"
        "from zeroclaw_eval import hookimpl\n"
        "from zeroclaw_eval.plugins.registry import DeferredFamily\n"
        "@hookimpl\n"
        "def zeroclaw_eval_register_families(register):\n"
        "    register(DeferredFamily('later', lambda: importlib.import_module('gone_away')))\n"
    )
    site = pip_installed_plugin(tmp_path, "deferring", deferring)
    suite = tmp_path / "suite"
    suite.mkdir()
    case = {
        "model_name": "m",
        "turns": [{"user_input": "hi", "steps": [{"response": {"type": "text", "content": "hi"}}]}],
        "expects": {"response_contains": ["hi"], "later": True},
    }
    (suite / "a.json").write_text(json.dumps(case), encoding="utf-8")
    result = run_zeroclaw(
        ["eval", "run", "--suite", str(suite), "--no-history"], cwd=tmp_path, env=with_broken(site)
    )
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith(
        "Error: plugin 'deferring' failed to load family 'later': ModuleNotFoundError"
    ), result.stderr
    assert "Traceback" not in result.stderr
