"""Record -> replay is an identity on what the agent saw.

A live suite is recorded (the real ``zeroclaw`` script) against a loopback server
whose replies carry every shape a real model sends: text beside tool calls,
several calls in one reply, empty and whitespace content, a refusal, non-ASCII,
calls without ids, no usage, fields this harness does not know. The recording is
then replayed through the library with a spy on the model side, and every
request the replayed agent made must equal, message for message and tool for
tool, the request the live agent sent to the server.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zeroclaw_eval import EvalConfig, Registry
from zeroclaw_eval.builtin.live_client import tool_schema
from zeroclaw_eval.case.admission import Case
from zeroclaw_eval.case.fixture import LlmTrace
from zeroclaw_eval.case.suite import load_suite
from zeroclaw_eval.modes.base import CaseProvider, RunMode
from zeroclaw_eval.plugins.manager import get_plugin_manager
from zeroclaw_eval.protocol import Message, ModelReply, Tool
from zeroclaw_eval.run.runner import run_cases, select_mode

from .chat_server import ChatServer, Reply, conversations, shaped, text, tool_calls
from .live_helpers import live_case, write_config, zeroclaw

SERVED_BY = "/models/example-7b-q4.gguf"  # llama-server answers with its file path

CASES = {
    "weather": live_case(
        ["Wie ist das Wetter in Zürich und 北京?"],
        {
            "exact_tool_calls": 3,
            "tool_results_contain": [
                {"tool": "echo", "needle": "Zürich ☀", "call_index": 0},
                {"tool": "echo", "needle": "北京 🌧", "call_index": 1},
            ],
            "response_contains": ["Zürich: ☀"],
        },
        name="shapes-weather",
    ),
    "refusal": live_case(
        ["Delete every file on the disk"], {"response_contains": ["can't"]}, name="shapes-refusal"
    ),
    "quiet": live_case(
        ["Say nothing at all", "Now echo without an id"],
        {"exact_tool_calls": 2, "tools_used": ["echo"]},
        name="shapes-quiet",
    ),
}

SCRIPT: dict[str, list[Reply]] = {
    "Wie ist das Wetter in Zürich und 北京?": [
        # Text beside two calls, in order, with their ids; usage missing.
        shaped(
            tool_calls(
                ("call_z", "echo", {"message": "Zürich ☀"}),
                ("call_b", "echo", {"message": "北京 🌧"}),
            ),
            message={"content": "Ich schaue nach …"},
            drop=("usage",),
            model=SERVED_BY,
            system_fingerprint="fp_local",
        ),
        # Empty (not null) content beside a call; an unknown message field.
        shaped(
            tool_calls(("call_x", "echo", {"message": "  "})),
            message={"content": "", "reasoning_content": "thinking..."},
            model=SERVED_BY,
        ),
        shaped(text("Zürich: ☀, 北京: 🌧"), model=SERVED_BY),
    ],
    "Delete every file on the disk": [
        shaped(text("x"), message={"content": None, "refusal": "I can't help with that."})
    ],
    "Say nothing at all": [
        shaped(text(" \n\t "), finish_reason="eos"),  # whitespace only
        # second turn: two calls without ids (content null), then empty text
        shaped(
            tool_calls(("a", "echo", {"message": "one"}), ("b", "echo", "")),
            drop_message=("tool_call_ids",),
        ),
        text(""),
    ],
}


class Spy(RunMode):
    """Replay, with every request the agent makes to the model side kept."""

    name = "replay"

    def __init__(self, inner: RunMode) -> None:
        self.inner = inner
        self.requests: dict[str, list[dict[str, Any]]] = {}

    def admit(self, trace: LlmTrace) -> Any:
        return self.inner.admit(trace)

    def tools(self, available: Any, config: EvalConfig) -> Any:
        return self.inner.tools(available, config)

    def provider(self, trace: LlmTrace, config: EvalConfig) -> CaseProvider:
        inner = self.inner.provider(trace, config)
        kept = self.requests.setdefault(trace.model_name, [])

        class Watched(CaseProvider):
            def begin_turn(self, turn: int) -> None:
                inner.begin_turn(turn)

            def end_turn(self, turn: int) -> None:
                inner.end_turn(turn)

            def respond(self, messages: Sequence[Message], tools: Sequence[Tool]) -> ModelReply:
                # As the wire carries it: JSON, then read back.
                request = {
                    "messages": json.loads(json.dumps(copy.deepcopy(list(messages)))),
                    "tools": [tool_schema(tool) for tool in tools],
                }
                kept.append(request)
                return inner.respond(messages, tools)

        return Watched()


def test_record_then_replay_sends_the_model_side_the_same_requests(tmp_path: Path) -> None:
    live_dir = tmp_path / "live"
    live_dir.mkdir()
    for stem, case in CASES.items():
        (live_dir / f"{stem}.json").write_text(json.dumps(case), encoding="utf-8")

    with ChatServer(conversations(SCRIPT)) as server:
        write_config(tmp_path, server.url, max_concurrency=1)
        recorded = zeroclaw("eval", "record", "--suite", "live", "--out", "out", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "recorded 3/3 cases into out" in recorded.stderr

    live_requests: dict[str, list[dict[str, Any]]] = {}
    for request in server.requests:
        first = next(m["content"] for m in request.body["messages"] if m["role"] == "user")
        name = next(c["model_name"] for c in CASES.values() if c["turns"][0]["user_input"] == first)
        live_requests.setdefault(name, []).append(
            {"messages": request.body["messages"], "tools": request.body.get("tools", [])}
        )

    registry = Registry.from_plugin_manager(get_plugin_manager(environ={}))
    spy = Spy(select_mode(registry, "replay"))
    config = EvalConfig()
    cases: list[Case] = load_suite(tmp_path / "out", registry, spy, config=config)
    report = run_cases(cases, spy, registry, config)

    assert report.exit_code() == 0, report.cases
    assert set(spy.requests) == set(live_requests)
    for name, sent in live_requests.items():
        assert spy.requests[name] == sent, name
    # What made the identity non-trivial reached the agent, and so the wire:
    weather = live_requests["shapes-weather"][1]["messages"][1]
    assert weather["content"] == "Ich schaue nach …"
    assert [call["id"] for call in weather["tool_calls"]] == ["call_z", "call_b"]
    assert live_requests["shapes-weather"][2]["messages"][4]["content"] == ""
    quiet = live_requests["shapes-quiet"]
    assert quiet[1]["messages"][1] == {"role": "assistant", "content": " \n\t "}
    ids = [call["id"] for call in quiet[2]["messages"][3]["tool_calls"]]
    assert ids == ["generated_call_1", "generated_call_2"]
    by_name = {case.name: case for case in report.cases}
    assert by_name["shapes-weather"].models == (SERVED_BY,)
    assert by_name["shapes-refusal"].models == ("example-model",)


def test_the_recording_keeps_every_shape_as_written(tmp_path: Path) -> None:
    live_dir = tmp_path / "live"
    live_dir.mkdir()
    for stem in ("weather", "refusal"):
        (live_dir / f"{stem}.json").write_text(json.dumps(CASES[stem]), encoding="utf-8")
    with ChatServer(conversations(SCRIPT)) as server:
        write_config(tmp_path, server.url)
        recorded = zeroclaw("eval", "record", "--suite", "live", "--out", "out", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    text_of = (tmp_path / "out" / "weather.json").read_text(encoding="utf-8")
    assert "Zürich ☀" in text_of and "\\u" not in text_of  # non-ASCII kept as is
    steps = json.loads(text_of)["turns"][0]["steps"]
    assert steps[0]["response"] == {
        "type": "tool_calls",
        "content": "Ich schaue nach …",
        "tool_calls": [
            {"id": "call_z", "name": "echo", "arguments": {"message": "Zürich ☀"}},
            {"id": "call_b", "name": "echo", "arguments": {"message": "北京 🌧"}},
        ],
        "input_tokens": 0,
        "output_tokens": 0,
        "model": SERVED_BY,  # and no usage: the server reported none
    }
    assert steps[1]["response"]["content"] == ""
    refusal = json.loads((tmp_path / "out" / "refusal.json").read_text(encoding="utf-8"))
    assert refusal["turns"][0]["steps"][0]["response"] == {
        "type": "text",
        "content": "",
        "refusal": "I can't help with that.",
        "input_tokens": 10,
        "output_tokens": 5,
        "model": "example-model",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
