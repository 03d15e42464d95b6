"""A drift says what changed, path by path, in words a person reads: a long prompt
compared word by word, lists aligned, values cut, and a first line that stands alone."""

from __future__ import annotations

import copy
from typing import Any

from zeroclaw_eval.grading.request_diff import MAX_HUNKS, MAX_PATHS, describe

#: A system prompt as smolagents writes one: every tool's description in one 4 KB string.
PROMPT = "You are a terse assistant.\n" + "\n".join(
    f"- tool_{n}: does thing number {n} with care and returns its result" for n in range(60)
)


def request(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "history": 0,
        "messages": [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": "What was the order id again?"},
        ],
        "tools": {"echo": {"description": "Echo a message", "parameters": {"type": "object"}}},
        "settings": {"temperature": 0.0},
    }
    live = copy.deepcopy(base)
    for mutate in changes.values():
        mutate(live)
    return live


def test_equal_requests_have_no_diff() -> None:
    assert describe(request(), request()) == ""


def test_one_word_changed_in_a_long_prompt_is_one_line_with_the_word_and_its_context() -> None:
    def friendly(live: dict[str, Any]) -> None:
        live["messages"][0]["content"] = PROMPT.replace("terse", "friendly")

    assert len(PROMPT) > 3_500
    assert describe(request(), request(prompt=friendly)) == (
        'messages.0.content: "You are a [-terse-]{+friendly+} assistant.\\n- tool_0: does..."'
    )


def test_a_short_value_shows_before_and_after() -> None:
    def reworded(live: dict[str, Any]) -> None:
        live["messages"][1]["content"] = "Remind me of the order id."

    assert describe(request(), request(input=reworded)) == (
        'messages.1.content: "What was the order id again?" -> "Remind me of the order id."'
    )


def test_several_paths_are_listed_after_a_first_line_naming_them() -> None:
    def hotter(live: dict[str, Any]) -> None:
        live["settings"]["temperature"] = 0.7

    def redescribed(live: dict[str, Any]) -> None:
        live["tools"]["echo"]["description"] = "Echo a message back"

    assert describe(request(), request(a=hotter, b=redescribed)).splitlines() == [
        "2 paths changed: tools.echo.description, settings.temperature",
        '  tools.echo.description: "Echo a message" -> "Echo a message back"',
        "  settings.temperature: 0.0 -> 0.7",
    ]


def test_an_inserted_message_is_one_added_item_not_every_later_one_changed() -> None:
    def inserted(live: dict[str, Any]) -> None:
        live["messages"].insert(1, {"role": "user", "content": "hi"})

    def dropped(live: dict[str, Any]) -> None:
        del live["tools"]["echo"]

    assert describe(request(), request(a=inserted, b=dropped)).splitlines() == [
        "2 paths changed: messages.1, tools.echo",
        '  messages.1: added: {"content": "hi", "role": "user"}',
        '  tools.echo: removed (was {"description": "Echo a message", "parameters": '
        '{"type": "object"}})',
    ]


def test_changes_in_one_text_are_each_a_line_and_capped() -> None:
    def many(live: dict[str, Any]) -> None:
        text = PROMPT
        for n in range(0, 60, 8):  # far apart: a hunk each
            text = text.replace(f"number {n} ", f"no. {n} ")
        live["messages"][0]["content"] = text

    lines = describe(request(), request(many=many)).splitlines()
    assert lines[0] == "messages.0.content: 8 changes"
    assert len(lines) == 1 + MAX_HUNKS + 1
    assert lines[1] == (
        '  messages.0.content: "...- tool_0: does thing [-number-]{+no.+} 0 with care and..."'
    )
    assert lines[-1] == "  messages.0.content: ... and 3 more changes in this text"


def test_at_most_max_paths_are_listed() -> None:
    recorded = {"settings": {f"k{n}": n for n in range(MAX_PATHS + 5)}}
    live = {"settings": {f"k{n}": n + 1 for n in range(MAX_PATHS + 5)}}
    lines = describe(recorded, live).splitlines()
    assert (
        lines[0]
        == f"{MAX_PATHS + 5} paths changed: settings.k0, settings.k1, settings.k2 and 22 more"
    )
    assert len(lines) == 1 + MAX_PATHS + 1
    assert lines[-1] == "  ... and 5 more changed paths"


def test_a_long_value_is_cut_and_its_type_change_shown() -> None:
    recorded = {"settings": {"stop": "x" * 500}}
    live = {"settings": {"stop": ["x"]}}
    line = describe(recorded, live)
    assert line.startswith('settings.stop: "xxx') and line.endswith('... -> ["x"]')
    assert len(line) < 200
