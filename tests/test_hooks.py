"""Every hook: documented in docs/HOOKS.md as hookspecs.py declares it, and exercised
here by a plugin that implements it, through the CLI the way users run it.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from zeroclaw_eval import (
    AgentSession,
    AgentUnderTest,
    CaseProvider,
    CheckResult,
    Dialect,
    EvalConfig,
    Family,
    Formatter,
    LlmTrace,
    ModelReply,
    ModelSide,
    RunMode,
    RunRecord,
    SuiteReport,
    Tool,
    ToolResult,
    hookimpl,
    hookspecs,
)
from zeroclaw_eval.testing import fixture, make_registry, run_cli, write_fixture

from .conftest import PROJECT

HOOKS = sorted(name for name in vars(hookspecs) if name.startswith("zeroclaw_eval_"))
HOOKS_DOC = PROJECT / "docs" / "HOOKS.md"


def signature(name: str) -> str:
    """The hook's signature as written in the docs (annotations are strings here)."""
    return f"def {name}{inspect.signature(getattr(hookspecs, name))}".replace("'", "")


# --- the reference is complete and true ---------------------------------------------


def test_there_are_hooks() -> None:
    assert HOOKS == [
        "zeroclaw_eval_register_agents",
        "zeroclaw_eval_register_dialects",
        "zeroclaw_eval_register_families",
        "zeroclaw_eval_register_formatters",
        "zeroclaw_eval_register_modes",
        "zeroclaw_eval_register_settings",
        "zeroclaw_eval_register_tools",
    ]


@pytest.mark.parametrize("name", HOOKS)
def test_every_hook_is_a_documented_spec(name: str) -> None:
    spec = getattr(hookspecs, name)
    assert hasattr(spec, "zeroclaw_eval_spec"), f"{name} is not marked @hookspec"
    assert inspect.getdoc(spec), f"{name} has no docstring"
    text = HOOKS_DOC.read_text(encoding="utf-8")
    assert f"\n## `{name}`\n" in text, f"docs/HOOKS.md has no section for {name}"
    assert f"```python\n{signature(name)}\n```" in text, f"docs/HOOKS.md: stale signature of {name}"


def test_the_reference_documents_no_hook_that_does_not_exist() -> None:
    documented = re.findall(r"^## `(zeroclaw_eval_\w+)`$", HOOKS_DOC.read_text(), re.M)
    assert sorted(documented) == HOOKS


def test_every_hook_has_a_test_of_its_own() -> None:
    tests = {name for name in globals() if name.startswith("test_hook_")}
    assert {f"test_hook_{name}" for name in HOOKS} <= tests


def test_each_hook_is_called_once_in_documented_order() -> None:
    calls: list[str] = []

    class Recorder:
        @hookimpl
        def zeroclaw_eval_register_families(self) -> None:
            calls.append("families")

        @hookimpl
        def zeroclaw_eval_register_formatters(self) -> None:
            calls.append("formatters")

        @hookimpl
        def zeroclaw_eval_register_modes(self) -> None:
            calls.append("modes")

        @hookimpl
        def zeroclaw_eval_register_tools(self) -> None:
            calls.append("tools")

        @hookimpl
        def zeroclaw_eval_register_agents(self) -> None:
            calls.append("agents")

        @hookimpl
        def zeroclaw_eval_register_dialects(self) -> None:
            calls.append("dialects")

        @hookimpl
        def zeroclaw_eval_register_settings(self) -> None:
            calls.append("settings")

    make_registry(Recorder())
    assert calls == ["families", "formatters", "modes", "tools", "agents", "dialects", "settings"]


# --- one test per hook --------------------------------------------------------------


class WordCount(Family[int]):
    """The final response has exactly ``n`` words."""

    name = "response_word_count"
    params = int

    def grade(self, params: int, run: RunRecord) -> list[CheckResult]:
        words = len((run.final_response or "").split())
        return [CheckResult(f"{self.name}: {params}", words == params, f"{words} words")]


class Initials(Formatter):
    name = "initials"

    def render(self, report: SuiteReport) -> str:
        return "".join("P" if case.passed else "F" for case in report.cases) + "\n"


class Constant(CaseProvider):
    def respond(self, messages: Sequence[Any], tools: Sequence[Tool]) -> ModelReply:
        return ModelReply(f"constant reply to {messages[-1]['content']}")


class ConstantMode(RunMode):
    name = "constant"

    def admit(self, trace: LlmTrace) -> Iterable[Any]:
        return ()

    def provider(self, trace: LlmTrace, config: EvalConfig) -> CaseProvider:
        return Constant()


class Upper:
    name = "upper"
    description = "Upper-case the message."
    parameters: Mapping[str, Any] = MappingProxyType({"type": "object"})

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(str(arguments.get("message", "")).upper())


class ShoutingSession(AgentSession):
    """Asks the model once per turn and shouts its text back; never runs a tool."""

    def __init__(self, side: ModelSide) -> None:
        self.side = side
        self.history: list[dict[str, Any]] = []
        self.run_record = RunRecord()

    def run_turn(self, turn: int, user_input: str) -> str:
        self.history.append({"role": "user", "content": user_input})
        reply = self.side.provider.respond(self.history, list(self.side.tools.values()))
        text = (reply.content or "").upper()
        self.history.append({"role": "assistant", "content": text})
        self.run_record.responses.append(text)
        return text

    def record(self) -> RunRecord:
        return self.run_record


class Shouter(AgentUnderTest):
    name = "shouter"
    cannot_certify = MappingProxyType({"exact_tool_calls": "it never runs a tool"})

    def start(self, side: ModelSide) -> AgentSession:
        return ShoutingSession(side)


class EveryHook:
    """One plugin object implementing every hook."""

    @hookimpl
    def zeroclaw_eval_register_families(self, register: Callable[[Family[Any]], None]) -> None:
        register(WordCount())

    @hookimpl
    def zeroclaw_eval_register_formatters(self, register: Callable[[Formatter], None]) -> None:
        register(Initials())

    @hookimpl
    def zeroclaw_eval_register_modes(self, register: Callable[[RunMode], None]) -> None:
        register(ConstantMode())

    @hookimpl
    def zeroclaw_eval_register_tools(
        self, register: Callable[[str, Callable[[], Tool]], None]
    ) -> None:
        register(Upper.name, Upper)

    @hookimpl
    def zeroclaw_eval_register_agents(self, register: Callable[[AgentUnderTest], None]) -> None:
        register(Shouter())

    @hookimpl
    def zeroclaw_eval_register_dialects(self, register: Callable[[Dialect], None]) -> None:
        register(BRACKETED)


#: A stack that shows the model each result in brackets, and an error after a tag.
BRACKETED = Dialect("bracketed", success=("[{result}]",), error=("[error] {result}",))


def run(suite: Path, *args: str, plugin: object | None = None) -> tuple[int, str, str]:
    plugins = () if plugin is None else (plugin,)
    result = run_cli(["eval", "run", "--suite", str(suite), *args], *plugins)
    return result.exit_code, result.stdout, result.stderr


def test_hook_zeroclaw_eval_register_families(tmp_path: Path) -> None:
    write_fixture(tmp_path, fixture({"response_word_count": 3}, response="one two three"))
    assert run(tmp_path, plugin=EveryHook())[0] == 0
    write_fixture(tmp_path, fixture({"response_word_count": 2}, response="one"), "b.json")
    code, stdout, _ = run(tmp_path, plugin=EveryHook())
    assert code == 1
    assert "✗ response_word_count: 2: 1 words" in stdout
    # The family is admitted like a built-in: strictly typed parameters.
    write_fixture(tmp_path, fixture({"response_word_count": "2"}), "c.json")
    code, _, stderr = run(tmp_path, plugin=EveryHook())
    assert code == 1
    assert 'c.json: expects.response_word_count="2": must be an integer, not a string' in stderr
    # Without the plugin, the key is unknown: fail closed.
    assert "expects.response_word_count: unknown key" in run(tmp_path)[2]


def test_hook_zeroclaw_eval_register_formatters(tmp_path: Path) -> None:
    write_fixture(tmp_path, fixture({"response_contains": ["done"]}), "a.json")
    write_fixture(tmp_path, fixture({"response_contains": ["nope"]}), "b.json")
    code, stdout, _ = run(tmp_path, "--format", "initials", plugin=EveryHook())
    assert (code, stdout) == (1, "PF\n")
    target = tmp_path / "initials.txt"
    run(tmp_path, "--report", f"initials:{target}", plugin=EveryHook())
    assert target.read_text(encoding="utf-8") == "PF\n"


def test_hook_zeroclaw_eval_register_modes(tmp_path: Path) -> None:
    case = fixture({"response_contains": ["constant reply to Go"]}, response="scripted")
    write_fixture(tmp_path, case)
    assert run(tmp_path, plugin=EveryHook())[0] == 1  # replay plays the script
    code, stdout, _ = run(tmp_path, "--mode", "constant", plugin=EveryHook())
    assert code == 0, stdout


def test_hook_zeroclaw_eval_register_tools(tmp_path: Path) -> None:
    expects = {
        "tool_results_contain": [{"tool": "upper", "needle": "HELLO"}],
        "all_tools_succeeded": True,
    }
    write_fixture(tmp_path, fixture(expects, tool_calls=[("upper", {"message": "hello"})]))
    assert run(tmp_path, plugin=EveryHook())[0] == 0
    code, stdout, _ = run(tmp_path)
    assert code == 1
    assert "unknown tool 'upper'" in stdout


def test_hook_zeroclaw_eval_register_agents(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    write_fixture(suite, fixture({"response_contains": ["DONE"]}, response="done"))
    code, stdout, _ = run(suite, plugin=EveryHook())
    assert code == 1, stdout  # the reference loop returns the scripted text as it is
    assert '✗ response_contains: "DONE": not found' in stdout
    assert run(suite, "--agent", "shouter", plugin=EveryHook())[0] == 0
    code, _, stderr = run(suite, "--agent", "whisperer", plugin=EveryHook())
    assert code == 2
    assert "unknown agent 'whisperer' (known: reference, shouter)" in stderr
    listed = run_cli(["eval", "plugins"], EveryHook()).stdout
    assert "reference (built-in)\n    agents: reference\n" in listed
    assert "agents: shouter" in listed
    # [eval].agent selects it too, and an unknown name lists the known agents.
    config = tmp_path / "zeroclaw.toml"
    config.write_text('[eval]\nagent = "shouter"\n', encoding="utf-8")
    assert run(suite, "--config", str(config), plugin=EveryHook())[0] == 0
    code, _, stderr = run(suite, "--config", str(config))
    assert code == 1
    assert "eval.agent='shouter': unknown agent (known: reference)" in stderr
    # What the agent cannot certify is refused at admission, only when it runs.
    write_fixture(suite, fixture({"exact_tool_calls": 1}, tool_calls=[("echo", {})]), "b.json")
    code, _, stderr = run(suite, "--agent", "shouter", plugin=EveryHook())
    assert code == 1
    assert (
        "b.json: expects.exact_tool_calls=1: agent 'shouter' cannot certify this family: "
        "it never runs a tool"
    ) in stderr
    assert run(suite, plugin=EveryHook())[0] == 1  # admitted for reference; DONE still fails
    assert "b.json" not in run(suite, plugin=EveryHook())[2]


def test_hook_zeroclaw_eval_register_dialects(tmp_path: Path) -> None:
    # An honest agent whose framework shows each result in brackets: read its way, it
    # passes; read as the chat default (the result alone), it would be a liar.
    from .bridged_helpers import configure, factory

    agent = "\n".join([factory("loop_agent:make_bracketing"), 'tools = "served"'])
    config = configure(tmp_path / "project", agent)
    suite = tmp_path / "suite"
    expects = {"tool_results_contain": [{"tool": "echo", "needle": "hello"}]}
    write_fixture(suite, fixture(expects, tool_calls=[("echo", {"message": "hello"})]))
    code, stdout, _ = run(suite, "--config", str(config), plugin=EveryHook())
    assert code == 1
    assert (
        "✗ served_tools: results sent back: turn 0: 'echo' call 'call_1': the tool returned "
        "'hello', the agent sent the model '[hello]'"
    ) in stdout
    text = config.read_text(encoding="utf-8")
    config.write_text(text + 'dialect = "bracketed"\n', encoding="utf-8")
    assert run(suite, "--config", str(config), plugin=EveryHook())[0] == 0
    # Without the plugin the name is unknown: a configuration error naming the known ones.
    code, _, stderr = run(suite, "--config", str(config))
    assert code == 1
    assert "eval.agent.dialect='bracketed': unknown dialect (known dialects: ag2, chat," in stderr
    listed = run_cli(["eval", "plugins"], EveryHook()).stdout
    assert "dialects: bracketed" in listed


def test_hook_zeroclaw_eval_register_settings(tmp_path: Path) -> None:
    # The plugin's table reaches the plugin, validated: here a formatter's greeting.
    from pydantic import BaseModel, ConfigDict

    class Greeting(BaseModel):
        model_config = ConfigDict(extra="forbid")
        word: str = "hi"

    class Greeter(Formatter):
        name = "greeter"
        word = "unset"

        def render(self, report: SuiteReport) -> str:
            return f"{self.word}, {len(report.cases)} cases\n"

    greeter = Greeter()

    class Plugin:
        __name__ = "greeter"

        @hookimpl
        def zeroclaw_eval_register_formatters(self, register: Callable[..., None]) -> None:
            register(greeter)

        @hookimpl
        def zeroclaw_eval_register_settings(self, register: Callable[..., None]) -> None:
            register(Greeting, lambda settings: setattr(greeter, "word", settings.word))

    suite = tmp_path / "suite"
    write_fixture(suite, fixture({"response_contains": ["hi"]}, response="hi"))
    config = tmp_path / "zeroclaw.toml"
    config.write_text('[eval.plugins.greeter]\nword = "bonjour"\n', encoding="utf-8")
    result = run_cli(
        ["eval", "run", "--suite", suite, "--config", config, "--format", "greeter"], Plugin()
    )
    assert (result.exit_code, result.stdout) == (0, "bonjour, 1 cases\n"), result.stderr
