"""``zeroclaw eval record``: a live run against a loopback server becomes replay fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from zeroclaw_eval.version import __version__

from .chat_server import ChatServer, Reply, conversations, text, tool_calls
from .conftest import PROJECT
from .live_helpers import SECRET, live_case, write_config, zeroclaw

ECHO_TWICE = live_case(
    ["Echo zeroclaw_user", "Now echo example.com"],
    {
        "exact_tool_calls": 2,
        "tool_results_contain": [
            {"tool": "echo", "needle": "zeroclaw_user", "call_index": 0},
            {"tool": "echo", "needle": "example.com", "call_index": 1},
        ],
        "response_contains": ["example.com"],
    },
    name="record-echo-twice",
)
GREETING = live_case(["Say hi"], {"response_matches": ["^hi"]}, name="record-greeting")

SCRIPT = {
    "Echo zeroclaw_user": [
        tool_calls(("call_a", "echo", {"message": "zeroclaw_user"}), prompt_tokens=21),
        text("echoed zeroclaw_user", prompt_tokens=34, completion_tokens=4),
        tool_calls(("call_b", "echo", {"message": "example.com"}), completion_tokens=7),
        text("echoed example.com"),
    ],
    "Say hi": [text("hi there", prompt_tokens=3, completion_tokens=2)],
}


def write_suite(directory: Path, *cases: Any) -> Path:
    directory.mkdir()
    for case in cases:
        name = case["model_name"].removeprefix("record-").replace("-", "_")
        (directory / f"{name}.json").write_text(json.dumps(case), encoding="utf-8")
    return directory


def test_recorded_fixtures_replay_green_unchanged(tmp_path: Path) -> None:
    write_suite(tmp_path / "live", ECHO_TWICE, GREETING)
    with ChatServer(conversations(SCRIPT)) as server:
        write_config(tmp_path, server.url, max_concurrency=2)
        recorded = zeroclaw("eval", "record", "--suite", "live", "--out", "out", cwd=tmp_path)

    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "2/2 cases passed" in recorded.stdout
    assert "recorded 2/2 cases into out" in recorded.stderr
    written = json.loads((tmp_path / "out" / "echo_twice.json").read_text(encoding="utf-8"))
    requests = [step.pop("request") for turn in written["turns"] for step in turn["steps"]]
    # What the recording observed, and from where: the model boundary, no effects.
    assert written.pop("capture") == {
        "made_by": "record",
        "sources": [f"zeroclaw-eval {__version__} record, mode live, agent reference"],
        "observed": ["replies", "requests", "tool_results"],
    }
    # Each step keeps the request it answered, normalised and compacted: the first
    # whole, each later one as what it adds to the one before.
    assert requests[0]["messages"] == [{"role": "user", "content": "Echo zeroclaw_user"}]
    assert list(requests[0]["tools"]) == ["echo"]
    assert requests[1]["history"] == 1
    assert [m["role"] for m in requests[1]["messages"]] == ["assistant", "tool"]
    assert requests[1]["messages"][1] == {
        "role": "tool",
        "content": "zeroclaw_user",
        "tool_call_id": "call_1",
    }
    assert requests[2]["messages"][-1] == {"role": "user", "content": "Now echo example.com"}
    assert "tools" not in requests[2]  # the same offer as the request before
    assert written == {
        "model_name": "record-echo-twice",
        "turns": [
            {
                "user_input": "Echo zeroclaw_user",
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [
                                {
                                    "id": "call_a",
                                    "name": "echo",
                                    "arguments": {"message": "zeroclaw_user"},
                                }
                            ],
                            "input_tokens": 21,
                            "output_tokens": 5,
                            "model": "example-model",
                            "usage": {"input_tokens": 21, "output_tokens": 5},
                        }
                    },
                    {
                        "response": {
                            "type": "text",
                            "content": "echoed zeroclaw_user",
                            "input_tokens": 34,
                            "output_tokens": 4,
                            "model": "example-model",
                            "usage": {"input_tokens": 34, "output_tokens": 4},
                        }
                    },
                ],
            },
            {
                "user_input": "Now echo example.com",
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [
                                {
                                    "id": "call_b",
                                    "name": "echo",
                                    "arguments": {"message": "example.com"},
                                }
                            ],
                            "input_tokens": 10,
                            "output_tokens": 7,
                            "model": "example-model",
                            "usage": {"input_tokens": 10, "output_tokens": 7},
                        }
                    },
                    {
                        "response": {
                            "type": "text",
                            "content": "echoed example.com",
                            "input_tokens": 10,
                            "output_tokens": 5,
                            "model": "example-model",
                            "usage": {"input_tokens": 10, "output_tokens": 5},
                        }
                    },
                ],
            },
        ],
        "expects": ECHO_TWICE["expects"],
    }

    # The server is gone: replay runs offline, from the files exactly as written.
    replayed = zeroclaw("eval", "run", "--suite", "out", cwd=tmp_path)
    checked = zeroclaw("eval", "check", "--suite", "out", cwd=tmp_path)

    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "2/2 cases passed" in replayed.stdout
    assert (
        "capture: sequence reproduced (made by record from zeroclaw-eval "
        f"{__version__} record, mode live, agent reference; observed: replies, requests, "
        "tool_results); not observed: tool side effects"
    ) in replayed.stdout
    assert checked.returncode == 0, checked.stderr
    for path in (tmp_path / "out").iterdir():
        assert SECRET not in path.read_text(encoding="utf-8")
    assert SECRET not in recorded.stdout + recorded.stderr


def test_record_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    write_suite(tmp_path / "live", GREETING)
    out = tmp_path / "out"
    out.mkdir()
    existing = out / "greeting.json"
    existing.write_text("keep me\n", encoding="utf-8")
    with ChatServer(conversations(SCRIPT)) as server:
        write_config(tmp_path, server.url)
        refused = zeroclaw("eval", "record", "--suite", "live", "--out", "out", cwd=tmp_path)
        sent_before_force = len(server.requests)
        forced = zeroclaw(
            "eval", "record", "--suite", "live", "--out", "out", "--force", cwd=tmp_path
        )

    assert refused.returncode == 1
    assert refused.stderr == (
        "Error: out/greeting.json: already exists; pass --force to overwrite\n"
    )
    assert sent_before_force == 0  # refused before anything ran
    assert forced.returncode == 0, forced.stdout + forced.stderr
    rewritten = json.loads(existing.read_text(encoding="utf-8"))
    assert rewritten["turns"][0]["steps"][0]["response"]["content"] == "hi there"


def test_a_case_that_hits_a_run_error_is_reported_and_not_written(tmp_path: Path) -> None:
    write_suite(tmp_path / "live", ECHO_TWICE, GREETING)
    script = {**SCRIPT, "Say hi": [Reply(b"<html>bad gateway</html>")]}
    with ChatServer(conversations(script)) as server:
        write_config(tmp_path, server.url)
        result = zeroclaw("eval", "record", "--suite", "live", "--out", "out", cwd=tmp_path)

    assert result.returncode == 1
    assert "✗ record-greeting (live/greeting.json): error:" in result.stdout
    assert "the reply is not valid JSON" in result.stdout
    assert "recorded 1/2 cases into out" in result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["echo_twice.json"]


def test_the_shipped_live_config_admits_the_live_suite() -> None:
    config = PROJECT / "evals" / "live" / "zeroclaw.toml"

    result = zeroclaw("eval", "check", "--config", str(config), cwd=PROJECT)

    assert result.returncode == 0, result.stderr
    assert "3 fixtures admitted; none is satisfied by an empty run" in result.stdout


def test_replay_until_replays_the_first_turns_and_records_the_rest_live(tmp_path: Path) -> None:
    """Turn 0 comes from the script, turn 1 from the live model, asked with the
    history the replayed turn built; the written fixture holds both."""
    suite = tmp_path / "suite"
    suite.mkdir()
    source = PROJECT / "evals" / "regression" / "multi_turn_recall_without_repeat_call.json"
    fixture = json.loads(source.read_text(encoding="utf-8"))
    (suite / source.name).write_text(json.dumps(fixture), encoding="utf-8")
    first_input = fixture["turns"][0]["user_input"]
    unused = text("never asked")
    live_answer = text("Your order id is ZC-4471, as before.")
    with ChatServer(conversations({first_input: [unused, unused, live_answer]})) as server:
        write_config(tmp_path, server.url)
        recorded = zeroclaw(
            "eval",
            "record",
            "--suite",
            "suite",
            "--out",
            "out",
            "--replay-until",
            "1",
            cwd=tmp_path,
        )
        asked = [request.body for request in server.requests]

    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    (request,) = asked  # only the last turn went live
    roles = [message["role"] for message in request["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    assert request["messages"][2]["content"] == "ZC-4471"  # the replayed echo's real result
    written = json.loads((tmp_path / "out" / source.name).read_text(encoding="utf-8"))
    responses = [step["response"] for turn in written["turns"] for step in turn["steps"]]
    assert responses[:2] == [step["response"] for step in fixture["turns"][0]["steps"]]
    assert responses[2]["content"] == "Your order id is ZC-4471, as before."
    assert written["expects"] == fixture["expects"]


def test_replay_until_refuses_what_it_cannot_splice(tmp_path: Path) -> None:
    write_suite(tmp_path / "live", GREETING)
    write_config(tmp_path, "http://127.0.0.1:9")
    one_turn = zeroclaw(
        "eval", "record", "--suite", "live", "--out", "out", "--replay-until", "1", cwd=tmp_path
    )
    assert one_turn.returncode == 1
    assert "--replay-until 1: the case has 1 turn, so none would run live" in one_turn.stderr
    both = zeroclaw(
        "eval", "record", "--suite", "live", "--update", "--replay-until", "1", cwd=tmp_path
    )
    assert both.returncode == 2
    assert "--replay-until records live turns; --update runs none" in both.stderr
