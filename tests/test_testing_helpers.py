"""zeroclaw_eval.testing gives every test the same plugins, whatever the machine has."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

import pytest

from zeroclaw_eval import Registry, Tool, ToolResult, get_plugin_manager, hookimpl
from zeroclaw_eval.plugins.manager import DEFAULT_PLUGINS, builtin_name
from zeroclaw_eval.testing import (
    fixture,
    make_registry,
    plugin_manager,
    run_cli,
    run_zeroclaw,
    write_fixture,
)

BUILTINS = [builtin_name(module) for module in DEFAULT_PLUGINS]


class Ping:
    name = "ping"
    description = "Answer pong."
    parameters: Mapping[str, object] = MappingProxyType({})

    def run(self, arguments: dict[str, object]) -> ToolResult:
        return ToolResult("pong")


class PingPlugin:
    @hookimpl
    def zeroclaw_eval_register_tools(
        self, register: Callable[[str, Callable[[], Tool]], None]
    ) -> None:
        register("ping", Ping)


def test_the_environment_blocks_plugins_of_the_library_but_not_of_the_helpers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ZEROCLAW_EVAL_DISABLE_PLUGINS", "echo, json")
    library = Registry.from_plugin_manager(get_plugin_manager())
    assert "echo" not in library.tools and "json" not in library.formatters
    helper = make_registry()
    assert "echo" in helper.tools and "json" in helper.formatters


def test_helpers_leave_entry_points_out_and_add_the_given_plugins() -> None:
    pm = plugin_manager(PingPlugin())
    assert [origin.name for origin in pm.origins.values() if origin.builtin] == BUILTINS
    (extra,) = [origin for origin in pm.origins.values() if not origin.builtin]
    assert extra.distribution is None
    assert "ping" in make_registry(PingPlugin()).tools


def test_autoload_off_leaves_only_the_builtins() -> None:
    pm = get_plugin_manager(environ={"ZEROCLAW_EVAL_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert list(pm.origins) == BUILTINS


def test_run_cli_registers_plugins_in_process(tmp_path: Path) -> None:
    listed = json.loads(run_cli(["eval", "plugins", "--json"], PingPlugin()).stdout)
    (row,) = [row for row in listed["plugins"] if not row["builtin"]]
    assert row["provides"]["tools"] == ["ping"]
    assert "(in-process)\n    tools: ping" in run_cli(["eval", "plugins"], PingPlugin()).stdout

    expects = {"tool_results_contain": [{"tool": "ping", "needle": "pong"}]}
    write_fixture(tmp_path, fixture(expects, tool_calls=[("ping", {})]))
    assert run_cli(["eval", "run", "--suite", str(tmp_path)], PingPlugin()).exit_code == 0
    assert run_cli(["eval", "run", "--suite", str(tmp_path)]).exit_code == 1


def test_the_helpers_take_str_paths_as_well_as_path(tmp_path: Path) -> None:
    directory = str(tmp_path / "made" / "here")  # a str, and missing: created
    written = write_fixture(directory, fixture({"response_contains": ["done"]}))
    assert written == Path(directory) / "case.json" and written.is_file()
    in_process = run_cli(["eval", "run", "--suite", Path(directory)])
    assert (in_process.exit_code, in_process.stdout.splitlines()[-1]) == (0, "1/1 cases passed")
    as_process = run_zeroclaw(["eval", "run", Path("made/here/case.json")], cwd=str(tmp_path))
    assert as_process.exit_code == 0, as_process.stderr
    assert "(made/here/case.json)" in as_process.stdout
