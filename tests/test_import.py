"""``zeroclaw eval import``: hand-made OTLP JSON traces become draft fixtures that are
admitted, pass ``eval check`` and replay green; what cannot be read is one line
naming it. (The trace of a real instrumented agent: test_import_instrumented.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conftest import zeroclaw
from .otlp_spans import (
    WEATHER_TOOL,
    calls,
    chat,
    execute_tool,
    export,
    results,
    span,
    text,
    write_lines,
)

TRACE = "0af7651916cd43dd8448eb211c80319c"
OTHER = "4bf92f3577b34da6a3ce929d0e0e4736"
SYSTEM = text("system", "You answer weather questions.")
ASK = text("user", "What is the weather in Paris?")
CALL = calls(("call_w1", "weather", {"city": "Paris"}))


def weather_trace(trace_id: str = TRACE, *, result_span: bool = True) -> list[dict[str, Any]]:
    """One turn: the model calls ``weather``, the tool answers, the model answers."""
    offer = {"gen_ai.tool.definitions": json.dumps([WEATHER_TOOL])}
    spans = [
        chat(trace_id, [SYSTEM, ASK], CALL, start=100, extra=offer),
        chat(
            trace_id,
            [SYSTEM, ASK, CALL, results(("call_w1", "12 C, light rain"))],
            text("assistant", "It is 12 C with light rain in Paris."),
            start=300,
            extra=offer,
        ),
    ]
    if result_span:
        spans.insert(1, execute_tool(trace_id, "call_w1", "weather", "12 C, light rain", start=200))
    return spans


def written(out: Path) -> dict[str, dict[str, Any]]:
    return {path.name: json.loads(path.read_text("utf-8")) for path in sorted(out.glob("*.json"))}


def test_a_genai_trace_becomes_a_draft_that_passes_check_and_replays_green(tmp_path: Path):
    trace = write_lines(tmp_path / "trace.jsonl", export(weather_trace()))
    out = tmp_path / "drafts"

    imported = zeroclaw("eval", "import", trace, "--out", out, "--no-requests", cwd=tmp_path)

    assert imported.returncode == 0, imported.stderr
    assert "Error" not in imported.stderr
    fixtures = written(out)
    assert list(fixtures) == [f"trace-{TRACE}.json"]
    fixture = fixtures[f"trace-{TRACE}.json"]
    steps = fixture["turns"][0]["steps"]
    assert fixture["turns"][0]["user_input"] == "What is the weather in Paris?"
    assert steps[0]["response"] == {
        "type": "tool_calls",
        "tool_calls": [{"id": "call_w1", "name": "weather", "arguments": {"city": "Paris"}}],
        "input_tokens": 40,
        "output_tokens": 9,
        "model": "gpt-4o-mini-2024-07-18",
    }
    assert steps[1]["response"]["content"] == "It is 12 C with light rain in Paris."
    assert fixture["tool_results"] == {"weather": [{"result": "12 C, light rain"}]}
    assert fixture["tool_definitions"]["weather"]["input_schema"] == WEATHER_TOOL["parameters"]
    assert fixture["expects"] == {
        "exact_tool_calls": 1,
        "tools_used": ["weather"],
        "tool_results_contain": [
            {"tool": "weather", "needle": "12 C, light rain", "call_index": 0}
        ],
    }
    assert fixture["capture"] == {
        "made_by": "import",
        "sources": [f"trace {TRACE}", "hand-made 1.0"],
        "observed": ["replies", "tool_offer", "tool_results"],
        "results_missing": [],
        "draft_expects": ["exact_tool_calls", "tools_used", "tool_results_contain"],
    }

    checked = zeroclaw("eval", "check", out, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    run = zeroclaw("eval", "run", "--suite", out, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1/1 cases passed" in run.stdout
    assert "capture: sequence reproduced (made by import" in run.stdout


def test_the_result_is_read_from_the_next_request_without_an_execute_tool_span(tmp_path: Path):
    trace = write_lines(tmp_path / "t.jsonl", export(weather_trace(result_span=False)))

    imported = zeroclaw("eval", "import", trace, "--out", tmp_path / "o", cwd=tmp_path)

    assert imported.returncode == 0, imported.stderr
    fixture = written(tmp_path / "o")[f"trace-{TRACE}.json"]
    assert fixture["tool_results"] == {"weather": [{"result": "12 C, light rain"}]}


def test_each_step_stores_its_request_normalised(tmp_path: Path):
    trace = write_lines(tmp_path / "t.jsonl", export(weather_trace()))

    imported = zeroclaw("eval", "import", trace, "--out", tmp_path / "o", cwd=tmp_path)

    assert imported.returncode == 0, imported.stderr
    steps = written(tmp_path / "o")[f"trace-{TRACE}.json"]["turns"][0]["steps"]
    assert steps[0]["request"] == {
        "messages": [
            {"role": "system", "content": "You answer weather questions."},
            {"role": "user", "content": "What is the weather in Paris?"},
        ],
        "tools": {
            "weather": {
                "description": "The weather in a city.",
                "parameters": WEATHER_TOOL["parameters"],
            }
        },
        "settings": {"model": "gpt-4o-mini"},
    }
    # The second leans on the first, as record stores it; ids masked as drift compares them.
    assert steps[1]["request"] == {
        "history": 2,
        "messages": [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "name": "weather", "arguments": {"city": "Paris"}}],
            },
            {"role": "tool", "content": "12 C, light rain", "tool_call_id": "call_1"},
        ],
    }


def test_a_bad_span_is_one_line_naming_its_trace_and_span(tmp_path: Path):
    broken = chat(OTHER, [ASK], text("assistant", "x"), start=50)
    broken["spanId"] = "00f067aa0ba902b7"
    for attribute in broken["attributes"]:
        if attribute["key"] == "gen_ai.input.messages":
            attribute["value"] = {"stringValue": "[{not json"}
    trace = write_lines(tmp_path / "t.jsonl", export([*weather_trace(), broken]))

    imported = zeroclaw("eval", "import", trace, "--out", tmp_path / "o", cwd=tmp_path)

    assert imported.returncode == 0, imported.stderr  # the good conversation was written
    errors = [line for line in imported.stderr.splitlines() if line.startswith("Error: ")]
    assert errors == [
        f"Error: trace {OTHER} span 00f067aa0ba902b7 ('chat gpt-4o-mini'): "
        "gen_ai.input.messages is not JSON (Expecting property name enclosed in double "
        "quotes: line 1 column 3 (char 2))"
    ]
    assert "Traceback" not in imported.stderr
    assert list(written(tmp_path / "o")) == [f"trace-{TRACE}.json"]
    assert "1 not imported" in imported.stderr


def test_nothing_importable_exits_1_and_says_why(tmp_path: Path):
    no_content = span(
        TRACE,
        "chat gpt-4o-mini",
        {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"},
        start=1,
        span_id="b7ad6b7169203331",
    )
    trace = tmp_path / "t.jsonl"
    trace.write_text(json.dumps(export([no_content])) + "\nnot json at all\n", "utf-8")

    imported = zeroclaw("eval", "import", trace, "--out", tmp_path / "o", cwd=tmp_path)

    assert imported.returncode == 1
    errors = [line for line in imported.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 2, imported.stderr
    assert errors[0].startswith(f"Error: {trace}:2: not JSON")
    assert errors[1].startswith(f"Error: trace {TRACE} span b7ad6b7169203331 ")
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in errors[1]
    assert not (tmp_path / "o").exists()


def test_an_otlp_http_body_and_a_directory_are_read(tmp_path: Path):
    traces = tmp_path / "traces"
    traces.mkdir()
    # One pretty-printed body, as an OTLP/HTTP JSON request carries it.
    (traces / "body.json").write_text(json.dumps(export(weather_trace()), indent=2), "utf-8")
    write_lines(traces / "more.jsonl", export(weather_trace(OTHER)))
    (traces / "notes.txt").write_text("not a trace", "utf-8")  # not read: not .json(l)

    imported = zeroclaw("eval", "import", traces, "--out", tmp_path / "o", cwd=tmp_path)

    assert imported.returncode == 0, imported.stderr
    assert list(written(tmp_path / "o")) == [f"trace-{TRACE}.json", f"trace-{OTHER}.json"]


def test_a_session_across_traces_is_one_conversation_of_two_turns(tmp_path: Path):
    session = {"gen_ai.conversation.id": "conv-42"}
    first = [
        chat(TRACE, [ASK], text("assistant", "Rainy, 12 C."), start=10, extra=session),
    ]
    again = text("user", "And tomorrow?")
    second = [
        chat(
            OTHER,
            [ASK, text("assistant", "Rainy, 12 C."), again],
            text("assistant", "Sunny tomorrow."),
            start=20,
            extra=session,
        ),
    ]
    trace = write_lines(tmp_path / "t.jsonl", export(first), export(second))

    by_trace = zeroclaw("eval", "import", trace, "--out", tmp_path / "t", cwd=tmp_path)
    by_session = zeroclaw(
        "eval", "import", trace, "--out", tmp_path / "s", "--by", "session", cwd=tmp_path
    )

    assert by_trace.returncode == 0, by_trace.stderr
    assert len(written(tmp_path / "t")) == 2
    assert by_session.returncode == 0, by_session.stderr
    fixture = written(tmp_path / "s")["session-conv-42.json"]
    assert [turn["user_input"] for turn in fixture["turns"]] == [
        "What is the weather in Paris?",
        "And tomorrow?",
    ]
    assert fixture["expects"] == {"response_contains": ["Sunny tomorrow."]}
    run = zeroclaw("eval", "run", "--suite", tmp_path / "s", "--drift", "off", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


def test_credentials_in_the_trace_are_redacted_and_said(tmp_path: Path):
    key = "sk-proj-" + "A1b2C3d4" * 4
    header = "Authorization: Bearer abcdef0123456789"
    leaky = text("user", f"Use my key {key} to check the weather in Paris")
    spans = [
        chat(TRACE, [leaky], CALL, start=1),
        execute_tool(
            TRACE, "call_w1", "weather", "Authorization: Bearer abcdef0123456789", start=2
        ),
        chat(
            TRACE,
            [leaky, CALL, results(("call_w1", header))],
            text("assistant", "Done."),
            start=3,
        ),
    ]
    trace = write_lines(tmp_path / "t.jsonl", export(spans))

    imported = zeroclaw("eval", "import", trace, "--out", tmp_path / "o", cwd=tmp_path)

    assert imported.returncode == 0, imported.stderr
    target = tmp_path / "o" / f"trace-{TRACE}.json"
    document = target.read_text("utf-8")
    assert key not in document
    assert "abcdef0123456789" not in document
    assert "Use my key [redacted] to check" in document
    assert f"{target}: redacted " in imported.stderr
    run = zeroclaw("eval", "run", "--suite", tmp_path / "o", "--drift", "off", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_call_without_a_result_is_refused_when_scripted_and_listed_when_the_agent_runs_it(
    tmp_path: Path,
):
    spans = [
        chat(TRACE, [ASK], CALL, start=1),
        # The agent's next request does not carry the result: a trace cut short.
        chat(TRACE, [ASK, CALL], text("assistant", "It rains."), start=2),
    ]
    trace = write_lines(tmp_path / "t.jsonl", export(spans))

    scripted = zeroclaw("eval", "import", trace, "--out", tmp_path / "s", cwd=tmp_path)
    own = zeroclaw(
        "eval", "import", trace, "--out", tmp_path / "a", "--tools", "agent", cwd=tmp_path
    )

    assert scripted.returncode == 1
    assert f"Error: trace {TRACE}: the call call_w1 to 'weather' has no result" in scripted.stderr
    assert own.returncode == 0, own.stderr
    fixture = written(tmp_path / "a")[f"trace-{TRACE}.json"]
    assert "tool_results" not in fixture
    assert fixture["capture"]["results_missing"] == ["weather"]


def test_a_turn_cut_short_on_tool_calls_names_the_span(tmp_path: Path):
    last = chat(TRACE, [ASK], CALL, start=1)
    trace = write_lines(tmp_path / "t.jsonl", export([last]))

    imported = zeroclaw("eval", "import", trace, "--out", tmp_path / "o", cwd=tmp_path)

    assert imported.returncode == 1
    assert (
        f"Error: trace {TRACE} span {last['spanId']}: the last turn ends on tool calls"
        in imported.stderr
    )


def test_existing_fixtures_are_kept_unless_forced(tmp_path: Path):
    trace = write_lines(tmp_path / "t.jsonl", export(weather_trace()))
    out = tmp_path / "o"
    out.mkdir()
    kept = out / f"trace-{TRACE}.json"
    kept.write_text("{}", "utf-8")

    refused = zeroclaw("eval", "import", trace, "--out", out, cwd=tmp_path)
    forced = zeroclaw("eval", "import", trace, "--out", out, "--force", cwd=tmp_path)

    assert refused.returncode == 1
    assert f"{kept}: already exists; pass --force to overwrite" in refused.stderr
    assert forced.returncode == 0, forced.stderr
    assert json.loads(kept.read_text("utf-8"))["model_name"] == f"trace-{TRACE}"


def test_openinference_spans_become_a_draft_too(tmp_path: Path):
    def message(prefix: str, role: str, content: str | None = None, **more: Any):
        entry = {f"{prefix}.message.role": role}
        if content is not None:
            entry[f"{prefix}.message.content"] = content
        entry.update({f"{prefix}.message.{key}": item for key, item in more.items()})
        return entry

    tool_call = {
        "tool_calls.0.tool_call.id": "call_9",
        "tool_calls.0.tool_call.function.name": "weather",
        "tool_calls.0.tool_call.function.arguments": '{"city": "Oslo"}',
    }
    common = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o-mini",
        "llm.invocation_parameters": json.dumps({"model": "gpt-4o-mini", "temperature": 0}),
        "llm.tools.0.tool.json_schema": json.dumps({"type": "function", "function": WEATHER_TOOL}),
        "llm.token_count.prompt": 12,
        "llm.token_count.completion": 4,
        "session.id": "s-1",
    }
    first = {
        **common,
        **message("llm.input_messages.0", "user", "Weather in Oslo?"),
        **message("llm.output_messages.0", "assistant", **tool_call),
    }
    second = {
        **common,
        **message("llm.input_messages.0", "user", "Weather in Oslo?"),
        **message("llm.input_messages.1", "assistant", **tool_call),
        **message("llm.input_messages.2", "tool", "-3 C, snow", tool_call_id="call_9"),
        **message("llm.output_messages.0", "assistant", "Snowy, -3 C."),
    }
    tool = {
        "openinference.span.kind": "TOOL",
        "tool.name": "weather",
        "tool.id": "call_9",
        "output.value": "-3 C, snow",
    }
    spans = [
        span(TRACE, "ChatCompletion", first, start=1),
        span(TRACE, "weather", tool, start=2),
        span(TRACE, "ChatCompletion", second, start=3),
    ]
    trace = write_lines(tmp_path / "t.jsonl", export(spans, "openinference.instrumentation"))

    imported = zeroclaw(
        "eval", "import", trace, "--out", tmp_path / "o", "--by", "session", cwd=tmp_path
    )

    assert imported.returncode == 0, imported.stderr
    fixture = written(tmp_path / "o")["session-s-1.json"]
    first_step = fixture["turns"][0]["steps"][0]
    assert first_step["response"]["tool_calls"] == [
        {"id": "call_9", "name": "weather", "arguments": {"city": "Oslo"}}
    ]
    assert first_step["request"]["settings"] == {"model": "gpt-4o-mini", "temperature": 0}
    assert fixture["tool_results"] == {"weather": [{"result": "-3 C, snow"}]}
    assert fixture["tool_definitions"]["weather"]["description"] == "The weather in a city."
    assert zeroclaw("eval", "check", tmp_path / "o", cwd=tmp_path).returncode == 0
    # The reference agent sends other requests than the traced one: replay it without drift.
    run = zeroclaw("eval", "run", "--suite", tmp_path / "o", "--drift", "off", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_report_claims_the_sequence_only_when_the_whole_script_played(tmp_path: Path):
    trace = write_lines(tmp_path / "t.jsonl", export(weather_trace()))
    out = tmp_path / "o"
    assert zeroclaw("eval", "import", trace, "--out", out, cwd=tmp_path).returncode == 0
    target = out / f"trace-{TRACE}.json"
    whole = json.loads(target.read_text("utf-8"))
    # A copy whose script the reference agent cannot play to its end.
    cut = json.loads(json.dumps(whole))
    cut["model_name"] = "cut"
    cut["turns"][0]["steps"].append(cut["turns"][0]["steps"][-1])
    (out / "cut.json").write_text(json.dumps(cut), "utf-8")

    run = zeroclaw(
        "eval", "run", "--suite", out, "--drift", "off", "--format", "json", cwd=tmp_path
    )

    cases = {case["name"]: case for case in json.loads(run.stdout)["cases"]}
    assert cases["cut"]["error"] is not None
    assert cases["cut"]["capture"] is None
    assert cases[f"trace-{TRACE}"]["capture"] == (
        f"sequence reproduced (made by import from trace {TRACE}; hand-made 1.0; observed: "
        "replies, requests, tool_offer, tool_results); not observed: tool side effects"
    )


def test_a_failed_call_is_named_and_skipped_but_an_unreadable_step_spoils_its_trace(
    tmp_path: Path,
):
    failed = span(
        TRACE,
        "chat gpt-4o-mini",
        {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"},
        start=50,
        error=True,
        span_id="a1a1a1a1a1a1a1a1",
    )
    hole = chat(OTHER, [SYSTEM, ASK], CALL, start=100, extra={"gen_ai.tool.definitions": "["})
    hole["spanId"] = "b2b2b2b2b2b2b2b2"
    rest = weather_trace(OTHER)[1:]  # its answer, without its first step
    trace = write_lines(tmp_path / "t.jsonl", export([failed, *weather_trace(), hole, *rest]))

    imported = zeroclaw("eval", "import", trace, "--out", tmp_path / "o", cwd=tmp_path)

    assert imported.returncode == 0, imported.stderr
    errors = [line for line in imported.stderr.splitlines() if line.startswith("Error: ")]
    assert errors == [
        f"Error: trace {TRACE} span a1a1a1a1a1a1a1a1 ('chat gpt-4o-mini'): the model call "
        "failed (status ERROR): no reply, so no step; skipped",
        f"Error: trace {OTHER} span b2b2b2b2b2b2b2b2 ('chat gpt-4o-mini'): "
        "gen_ai.tool.definitions is not JSON (Expecting value: line 1 column 2 (char 1))",
        f"Error: trace {OTHER}: not written: its span b2b2b2b2b2b2b2b2 could not be read, "
        "and a script without that step would not be the conversation",
    ]
    # The retried call's conversation is whole without the failed attempt.
    assert list(written(tmp_path / "o")) == [f"trace-{TRACE}.json"]
