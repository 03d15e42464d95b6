"""What plugins are handed: what they need, not the house.

A third-party mode declares what it can do and gets what a built-in gets; a
provider reports models and retries through the public ``case_notes()``; an
agent meets a route of the model bridge, never the server; a hook wrapper is
refused rather than skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import (
    AgentUnderTest,
    CaseProvider,
    EvalConfig,
    LlmTrace,
    ModelReply,
    ModelSide,
    PluginLoadError,
    Registry,
    RunMode,
    Tool,
    case_notes,
    get_plugin_manager,
    hookimpl,
)
from zeroclaw_eval.errors import ConfigError
from zeroclaw_eval.run.recording import recording_modes
from zeroclaw_eval.run.sessions import workers
from zeroclaw_eval.testing import fixture, make_registry, run_cli, write_fixture

from .bridged_helpers import echoing_plugin
from .conftest import echo_case

# --- hook wrappers ------------------------------------------------------------------


@pytest.mark.parametrize("marker", [{"wrapper": True}, {"hookwrapper": True}])
def test_a_hook_wrapper_is_refused_naming_the_plugin_and_the_hook(marker: dict[str, bool]) -> None:
    class Wrapping:
        @hookimpl(**marker)
        def zeroclaw_eval_register_formatters(self, register: Any) -> Any:
            return (yield)

    pm = get_plugin_manager(load_entry_points=False, environ={})
    pm.register(Wrapping(), name="wrapping")
    with pytest.raises(PluginLoadError) as refused:
        Registry.from_plugin_manager(pm)
    assert str(refused.value).startswith(
        "plugin 'wrapping' implements zeroclaw_eval_register_formatters as a hook wrapper; "
    )


def test_a_hook_wrapper_stops_the_cli_with_one_line(tmp_path: Path) -> None:
    class Wrapping:
        @hookimpl(wrapper=True)
        def zeroclaw_eval_register_families(self, register: Any) -> Any:
            return (yield)

    write_fixture(tmp_path, fixture({"response_contains": ["done"]}))
    result = run_cli(["eval", "run", "--suite", tmp_path], Wrapping())
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: plugin ")
    assert "as a hook wrapper" in result.stderr
    assert result.stderr.count("\n") == 1


# --- modes declare what they can do --------------------------------------------------


class Noting(CaseProvider):
    """Answers every request with text, noting a model and one retry as a live client would."""

    def __init__(self) -> None:
        self.notes = case_notes()  # taken on the case's thread, when the provider is made

    def respond(self, messages: Sequence[Any], tools: Sequence[Tool]) -> ModelReply:
        self.notes.served_by("acme-large-2")
        self.notes.retried("HTTP 529", 1, 0.25)
        return ModelReply("done")


class AcmeMode(RunMode):
    """A third-party mode that talks to a provider and takes generation settings."""

    name = "acme"
    talks_to_provider = True

    def provider(self, trace: LlmTrace, config: EvalConfig) -> CaseProvider:
        return Noting()

    def generation_settings(self, config: EvalConfig) -> Mapping[str, Any]:
        return {"model": "acme-large-2", "temperature": 0.5}


class ScriptedMode(RunMode):
    name = "scripted"
    replays_scripts = True

    def provider(self, trace: LlmTrace, config: EvalConfig) -> CaseProvider:
        return Noting()


class Modes:
    @hookimpl
    def zeroclaw_eval_register_modes(self, register: Callable[[RunMode], None]) -> None:
        register(AcmeMode())
        register(ScriptedMode())


def test_a_third_party_mode_records_its_generation_settings_as_live_does(tmp_path: Path) -> None:
    write_fixture(tmp_path, fixture({"response_contains": ["done"]}))
    result = run_cli(
        ["eval", "run", "--suite", tmp_path, "--mode", "acme", "--format", "json"], Modes()
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["mode"] == "acme"
    assert report["live_settings"] == {"model": "acme-large-2", "temperature": 0.5}


def test_a_mode_without_generation_settings_records_none(tmp_path: Path) -> None:
    write_fixture(tmp_path, fixture({"response_contains": ["done"]}))
    args = ["eval", "run", "--suite", tmp_path, "--mode", "scripted", "--format", "json"]
    result = run_cli(args, Modes())
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["live_settings"] is None


def test_a_third_party_provider_reports_models_and_retries_through_case_notes(
    tmp_path: Path,
) -> None:
    write_fixture(tmp_path, fixture({"response_contains": ["done"]}))
    result = run_cli(["eval", "run", "--suite", tmp_path, "--mode", "acme"], Modes())
    assert result.exit_code == 0, result.stderr
    assert "    model: acme-large-2\n" in result.stdout
    assert "    retried 1x: HTTP 529 (attempt 1, waited 0.25 s)\n" in result.stdout


class Wanting(AgentUnderTest):
    name = "wanting"

    def concurrency(self, config: EvalConfig) -> int | None:
        return 3

    def start(self, side: ModelSide) -> Any:
        raise NotImplementedError


def test_a_mode_that_replays_scripts_lets_the_agents_concurrency_stand() -> None:
    # A scripted mode allows 1 at a time, yet the agent's own 3 stand, as in replay;
    # a mode that talks to a provider still bounds the agent.
    assert workers(ScriptedMode(), Wanting(), EvalConfig()) == 3
    assert workers(AcmeMode(), Wanting(), EvalConfig()) == 1


def test_record_runs_the_configured_provider_mode_and_replays_in_a_scripted_one() -> None:
    registry = make_registry(Modes())
    provider, scripted = recording_modes(registry, "acme")
    assert (provider.name, scripted.name) == ("acme", "replay")
    provider, _ = recording_modes(registry, "replay")  # not a provider: the first that is
    assert provider.name == "live"


def test_record_without_a_mode_that_talks_to_a_provider_says_so() -> None:
    pm = get_plugin_manager(blocked=["live"], load_entry_points=False, environ={})
    with pytest.raises(
        ConfigError, match=r"record needs a run mode that talks to a provider.*live"
    ):
        recording_modes(Registry.from_plugin_manager(pm), "replay")


def test_a_mode_checks_its_configuration_against_the_tool_names() -> None:
    seen: list[Collection[str]] = []

    class Checking(RunMode):
        name = "checking"

        def check_config(self, config: EvalConfig, tools: Collection[str]) -> None:
            seen.append(tools)

        def provider(self, trace: LlmTrace, config: EvalConfig) -> CaseProvider:
            return Noting()

    class Plugin:
        @hookimpl
        def zeroclaw_eval_register_modes(self, register: Callable[[RunMode], None]) -> None:
            register(Checking())

    from zeroclaw_eval import run_cases
    from zeroclaw_eval.testing import admit

    registry = make_registry(Plugin())
    case = admit(fixture({"response_contains": ["done"]}))
    run_cases([case], registry.modes["checking"].obj, registry, EvalConfig(mode="checking"))
    assert [sorted(tools) for tools in seen] == [["echo"]]


# --- agents meet a route, not the server -----------------------------------------------


def test_a_bridged_agent_is_handed_a_route_opener_and_no_configuration(tmp_path: Path) -> None:
    handed: list[ModelSide] = []
    suite = tmp_path / "suite"
    write_fixture(suite, echo_case())
    args = ["eval", "run", "--suite", suite, "--agent", "echoing"]
    result = run_cli(args, echoing_plugin(tmp_path, handed))
    assert result.exit_code == 0, result.stdout + result.stderr
    [side] = handed
    assert not hasattr(side, "config")
    assert side.max_tool_iterations == EvalConfig().max_tool_iterations
    assert side.bridge is not None and callable(side.bridge.open_route)
    # Everything else of the server stays the run's: nothing public closes it,
    # starts it, or looks up another case's route.
    for name in ("close", "start", "lookup", "url", "routes", "open_routes"):
        assert not hasattr(side.bridge, name), name
    assert type(side.bridge).__name__ == "Routes"
