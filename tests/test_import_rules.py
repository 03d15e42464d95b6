"""The import's decisions, in-process: which expectations a conversation yields,
the needle taken from a text, and the exit code. (The command end to end, as a
real subprocess: test_import.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import Registry
from zeroclaw_eval.run.importing import Imported, import_traces, needle

from .otlp_spans import calls, chat, execute_tool, export, results, text, write_lines

TRACE = "3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c"
ASK = text("user", "Look up both orders")


def two_tools_trace() -> list[dict[str, Any]]:
    """One turn: ``order`` twice and ``stock`` once, then an answer."""
    first = calls(("c1", "order", {"id": 1}), ("c2", "stock", {"sku": "x"}))
    second = calls(("c3", "order", {"id": 2}))
    return [
        chat(TRACE, [ASK], first, start=1),
        execute_tool(TRACE, "c1", "order", "\n   \n  order 1: shipped  \nmore", start=2),
        execute_tool(TRACE, "c2", "stock", "   ", start=3),
        chat(TRACE, [ASK, first, results(("c1", "-"), ("c2", "-"))], second, start=4),
        execute_tool(TRACE, "c3", "order", "order 2: " + "y" * 80, start=5),
        chat(
            TRACE,
            [ASK, first, results(("c1", "-"), ("c2", "-")), second, results(("c3", "-"))],
            text("assistant", "Both found."),
            start=6,
        ),
    ]


def imported(tmp_path: Path, registry: Registry, spans: list[dict[str, Any]], **options: Any):
    trace = write_lines(tmp_path / "t.jsonl", export(spans))
    return import_traces([trace], tmp_path / "out", registry, **options)


def test_the_expectations_are_the_calls_the_tools_and_each_tools_first_result(
    tmp_path: Path, registry: Registry
):
    done = imported(tmp_path, registry, two_tools_trace())

    assert done.exit_code() == 0
    document = json.loads(Path(done.written[0]).read_text("utf-8"))
    assert document["expects"] == {
        "exact_tool_calls": 3,
        "tools_used": ["order", "stock"],
        # stock's only result is blank: no needle; order's first result gives one.
        "tool_results_contain": [{"tool": "order", "needle": "order 1: shipped", "call_index": 0}],
    }
    assert document["capture"]["draft_expects"] == [
        "exact_tool_calls",
        "tools_used",
        "tool_results_contain",
    ]


def test_a_later_call_gives_the_needle_when_the_first_result_is_blank(
    tmp_path: Path, registry: Registry
):
    spans = two_tools_trace()
    spans[1] = execute_tool(TRACE, "c1", "order", "", start=2)
    done = imported(tmp_path, registry, spans)

    document = json.loads(Path(done.written[0]).read_text("utf-8"))
    assert document["expects"]["tool_results_contain"] == [
        {"tool": "order", "needle": "order 2: " + "y" * 51, "call_index": 1}
    ]


def test_an_answer_without_tools_gives_a_needle_of_the_final_text(
    tmp_path: Path, registry: Registry
):
    spans = [chat(TRACE, [ASK], text("assistant", "\nNo orders found.\nSorry."), start=1)]
    done = imported(tmp_path, registry, spans)

    document = json.loads(Path(done.written[0]).read_text("utf-8"))
    assert document["expects"] == {"response_contains": ["No orders found."]}


def test_an_empty_answer_without_tools_is_not_written(tmp_path: Path, registry: Registry):
    spans = [chat(TRACE, [ASK], text("assistant", "  "), start=1)]

    done = imported(tmp_path, registry, spans)

    assert done.written == ()
    assert done.exit_code() == 1
    assert done.refused == (
        f"trace {TRACE}: the model neither called a tool nor answered with text: nothing "
        "to expect: not written",
    )


@pytest.mark.parametrize(
    ("text_in", "expected"),
    [
        ("hello", "hello"),
        ("  hello  ", "hello"),
        ("\n\n  second line first\nthird", "second line first"),
        ("x" * 59 + " y", "x" * 59),  # cut at 60, and the cut's trailing blank dropped
        ("z" * 61, "z" * 60),
        ("", None),
        (" \n\t\n", None),
    ],
)
def test_a_needle_is_the_first_non_blank_line_cut_to_sixty_characters(
    text_in: str, expected: str | None
):
    assert needle(text_in) == expected


@pytest.mark.parametrize(("written", "code"), [((), 1), (("a.json",), 0), (("a", "b"), 0)])
def test_the_import_exits_0_iff_it_wrote_a_fixture(written: tuple[str, ...], code: int):
    assert Imported(written, ("a line",), (), 3, 0).exit_code() == code


def test_every_tool_gets_its_needle_after_another_tools_repeated_calls(
    tmp_path: Path, registry: Registry
):
    first = calls(("c1", "order", {"id": 1}), ("c2", "order", {"id": 2}), ("c3", "stock", {}))
    spans = [
        chat(TRACE, [ASK], first, start=1),
        execute_tool(TRACE, "c1", "order", "order 1", start=2),
        execute_tool(TRACE, "c2", "order", "order 2", start=3),
        execute_tool(TRACE, "c3", "stock", "in stock", start=4),
        chat(TRACE, [ASK, first], text("assistant", "Done."), start=5),
    ]

    done = imported(tmp_path, registry, spans)

    document = json.loads(Path(done.written[0]).read_text("utf-8"))
    assert document["expects"]["tool_results_contain"] == [
        {"tool": "order", "needle": "order 1", "call_index": 0},
        {"tool": "stock", "needle": "in stock", "call_index": 0},
    ]


def test_a_call_without_a_result_gives_no_needle_when_the_agent_runs_its_tools(
    tmp_path: Path, registry: Registry
):
    first = calls(("c1", "order", {"id": 1}), ("c2", "stock", {}))
    spans = [
        chat(TRACE, [ASK], first, start=1),
        execute_tool(TRACE, "c2", "stock", "in stock", start=2),
        chat(TRACE, [ASK, first], text("assistant", "Done."), start=3),
    ]

    done = imported(tmp_path, registry, spans, tools="agent")

    document = json.loads(Path(done.written[0]).read_text("utf-8"))
    assert document["expects"]["tool_results_contain"] == [
        {"tool": "stock", "needle": "in stock", "call_index": 0}
    ]
    assert document["capture"]["results_missing"] == ["order"]


def test_tool_runs_without_a_model_call_are_named_and_not_written(
    tmp_path: Path, registry: Registry
):
    done = imported(tmp_path, registry, [execute_tool(TRACE, "c1", "order", "x", start=1)])

    assert done.exit_code() == 1
    assert done.refused == (f"trace {TRACE}: tool executions but no model call: nothing to script",)


def test_sessions_that_make_the_same_file_name_are_both_written(tmp_path: Path, registry: Registry):
    spans = [
        chat(TRACE, [ASK], text("assistant", "One."), start=1, extra={"session.id": "a/b"}),
        chat(
            "0" * 31 + "1", [ASK], text("assistant", "Two."), start=2, extra={"session.id": "a b"}
        ),
    ]

    done = imported(tmp_path, registry, spans, by="session")

    assert sorted(Path(path).name for path in done.written) == [
        "session-a-b-2.json",
        "session-a-b.json",
    ]


def test_a_file_that_is_no_utf8_or_nests_too_deeply_is_a_line(tmp_path: Path, registry: Registry):
    (tmp_path / "latin1.json").write_bytes(b'{"resourceSpans": "caf\xe9"}')
    (tmp_path / "deep.jsonl").write_text("[" * 100_000 + "\n", "utf-8")

    done = import_traces([tmp_path], tmp_path / "out", registry)

    assert done.exit_code() == 1
    assert done.refused == (
        f"{tmp_path / 'deep.jsonl'}:1: JSON nested too deeply to read",
        f"{tmp_path / 'latin1.json'}: not UTF-8 text (invalid continuation byte at byte 22)",
    )
