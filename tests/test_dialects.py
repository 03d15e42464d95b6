"""A dialect's forms decide what counts as a result shown whole: each rule pinned here.

The built-in dialects are the data of ``builtin/dialects.py``; the stacks that talk
them run end to end in ``tests/test_served_evidence.py`` and the conformance matrix.
"""

from __future__ import annotations

import pytest

from zeroclaw_eval.agents.dialect import CHAT, Dialect, Shown
from zeroclaw_eval.builtin.dialects import (
    AG2,
    GOOGLE_ADK,
    LLAMAINDEX,
    PYDANTIC_AI,
    SMOLAGENTS,
    SMOLAGENTS_CODE,
    VERCEL_AI,
)

OK = Shown("call_1", "city", "Paris: 2.1 million", True)
FAILED = Shown("call_1", "city", "no such city: Atlantis", False)


def test_chat_shows_exactly_the_result_and_nothing_else() -> None:
    assert CHAT.shows("Paris: 2.1 million", OK)
    assert not CHAT.shows("Paris: 2.1 million (cached)", OK)
    assert not CHAT.shows("Paris: 2.1", OK)
    assert not CHAT.shows(" Paris: 2.1 million", OK)
    assert CHAT.shows("no such city: Atlantis", FAILED)
    assert not CHAT.shows("ok, done", FAILED)


def test_a_failed_result_is_shown_in_an_error_form_and_a_success_in_a_success_form() -> None:
    assert PYDANTIC_AI.shows('{"error":"no such city: Atlantis"}', FAILED)
    # The error as a success, or a success in the error form, is not the result.
    assert not PYDANTIC_AI.shows("no such city: Atlantis", FAILED)
    assert not PYDANTIC_AI.shows('{"error":"Paris: 2.1 million"}', OK)
    assert PYDANTIC_AI.shows("Paris: 2.1 million", OK)


def test_placeholders_render_as_documented_and_other_braces_are_literal() -> None:
    call = Shown("c9", "add", 'it\'s "5" é', True)
    plain = Dialect("plain", success=("{call_id} {name} {result} {other} {}",))
    assert plain.forms(call) == ['c9 add it\'s "5" é {other} {}']
    as_json = Dialect("as-json", success=("{result|json}",))
    assert as_json.forms(call) == ['"it\'s \\"5\\" é"']
    as_repr = Dialect("as-repr", success=("{result|repr}",))
    assert as_repr.forms(call) == ["'it\\'s \"5\" é'"]


def test_a_stripping_dialect_strips_the_result_before_showing_it() -> None:
    padded = Shown("call_1", "echo", "  hello \n", True)
    assert SMOLAGENTS.forms(padded) == ["hello"]
    assert CHAT.forms(padded) == ["  hello \n"]


def test_a_block_joins_a_steps_results_in_call_id_order_with_its_separator() -> None:
    second = Shown("call_2", "echo", "two", True)
    first = Shown("call_1", "echo", "one ", True)
    assert SMOLAGENTS.block_form([second, first]) == "Observation:\none\ntwo"
    assert SMOLAGENTS.shows_block("Observation:\none\ntwo", [second, first])
    assert not SMOLAGENTS.shows_block("Observation:\ntwo\none", [second, first])
    assert not SMOLAGENTS.shows_block("Observation:\none\ntwo\n(cached)", [second, first])
    assert not SMOLAGENTS.shows_block("Observation:\none\ntw", [second, first])
    assert not SMOLAGENTS.shows_block("Observation:\none", [second, first])
    assert not SMOLAGENTS.shows_block("Observation:\none two", [second, first])
    assert not SMOLAGENTS.shows_block("Observed:\none\ntwo", [second, first])
    assert SMOLAGENTS.shows_block("Observatiom:\none\ntwo", [second, first]) is False
    assert not SMOLAGENTS.shows_block("Obs", [second, first])
    # Calls that share an id keep the order they were asked in.
    same = [Shown("c", "echo", "b", True), Shown("c", "echo", "a", True)]
    assert SMOLAGENTS.shows_block("Observation:\nb\na", same)
    in_call_order = Dialect("flat", results_in="user_message", separator=" | ")
    assert in_call_order.block_form([second, first]) == "two | one "
    assert in_call_order.shows_block("two | one ", [second, first])
    assert in_call_order.shows_block("", [])
    assert not in_call_order.shows_block("x", [])
    framed = Dialect("framed", results_in="user_message", block="<{results}>")
    assert framed.shows_block("<one >", [first])
    assert not framed.shows_block("<one >>", [first])
    assert not framed.shows_block("<>", [first])
    assert framed.shows_block("<one ]", [first]) is False
    # A head and a tail that overlap in a text too short for both are not a block.
    overlapping = Dialect("overlap", results_in="user_message", block="ab{results}ba")
    assert overlapping.shows_block("abba", [])
    assert overlapping.shows_block("aba", []) is False


def test_a_block_holds_each_result_in_any_of_its_forms() -> None:
    two_ways = Dialect("two-ways", results_in="user_message", success=("{result}", "[{result}]"))
    calls = [Shown("a", "t", "x", True), Shown("b", "t", "y", True)]
    for text in ("[x]\n[y]", "[x]\ny", "x\n[y]", "x\ny"):
        assert two_ways.shows_block(text, calls), text
    assert not two_ways.shows_block("[x\ny]", calls)
    # A form that is the start of another's does not lead the match astray.
    prefixed = Dialect("prefixed", results_in="user_message", success=("{result}", "{result}!"))
    assert prefixed.shows_block("a!\nb", [Shown("1", "t", "a", True), Shown("2", "t", "b", True)])
    many = [Shown(str(n), "t", str(n), True) for n in range(40)]  # 2**40 ways, checked at once
    assert two_ways.shows_block("\n".join(f"[{n}]" for n in range(40)), many)


def test_a_result_is_read_back_from_its_forms_the_most_framed_first() -> None:
    assert PYDANTIC_AI.read_result('{"error":"t\\u00e9"}', "c", "w") == "té"
    assert PYDANTIC_AI.read_result("plain", "c", "w") == "plain"
    # Read as JSON, not as a Python literal: JSON's "\/" is a slash.
    assert PYDANTIC_AI.read_result('{"error":"a\\/b"}', "c", "w") == "a/b"
    assert PYDANTIC_AI.read_result('{"error": broken', "c", "w") == '{"error": broken'
    langgraph = Dialect(
        "repr-errors", error=("Error: ToolException({result|repr})\n Please fix your mistakes.",)
    )
    shown = f"Error: ToolException({'it is down'!r})\n Please fix your mistakes."
    assert langgraph.read_result(shown, "c", "w") == "it is down"
    # A literal that is not a string is not a result.
    assert langgraph.read_result(
        "Error: ToolException(42)\n Please fix your mistakes.", "c", "w"
    ) == ("Error: ToolException(42)\n Please fix your mistakes.")
    named = Dialect("named", success=("{name} #{call_id}: {result}",), error=("!{result}",))
    assert named.read_result("add #c2: 5", "c2", "add") == "5"
    assert named.read_result("add #c3: 5", "c2", "add") == "add #c3: 5"
    assert named.read_result("!boom", "c2", "add") == "boom"
    # The most framed form is tried first, however many slots the others have.
    ordered = Dialect(
        "ordered", success=("{result}{name}{call_id}", "R:{result}"), error=("R:{result}",)
    )
    assert ordered.read_result("R:5nc", "c", "n") == "5nc"


def test_a_flattened_block_is_read_back_whole_or_as_its_one_calls_error() -> None:
    assert SMOLAGENTS.read_block("Observation:\n42", ("call_1", "add")) == "42"
    assert SMOLAGENTS.read_block("Observation:\n42\n43", None) == "42\n43"
    retry = (
        "\nNow let's retry: take care not to repeat previous errors! If you have retried "
        "several times, try a completely different approach.\n"
    )
    error = (
        "Error:\nError executing tool 'city' with arguments {'city': 'X'}: ValueError: no "
        "such city\nPlease try again or use another tool" + retry
    )
    # After whatever the message holds (the task, an earlier observation), or alone.
    for before in ("New task:\nLook up X\n", "Observation:\nhi\n", ""):
        failure = before + error
        assert SMOLAGENTS.read_block(failure, ("call_1", "city")) == (
            "{'city': 'X'}: ValueError: no such city"
        )
    ids = Dialect("ids", results_in="user_message", error_blocks=("{call_id} failed: {result}",))
    assert ids.read_block("c1 failed: boom", ("c1", "t")) == "boom"
    assert ids.read_block("c1 failed: boom", ("c2", "t")) == "c1 failed: boom"
    # Another tool's name, or a step of several calls, reads no error block.
    assert SMOLAGENTS.read_block(failure, ("call_1", "town")) == failure
    assert SMOLAGENTS.read_block(failure, None) == failure
    assert SMOLAGENTS.read_block("no framing", ("call_1", "city")) == "no framing"
    # The first error form that fits is the one read; a form may name the call's tool.
    two = Dialect(
        "two-errors",
        results_in="user_message",
        error_blocks=("{name} failed: {result}", "{result}"),
    )
    assert two.read_block("city failed: boom", ("c1", "city")) == "boom"
    assert two.read_block("add failed: boom", ("c1", "city")) == "add failed: boom"


def test_ag2_shows_a_served_result_as_the_toolkits_tuple_and_an_error_framed() -> None:
    # As AG2 0.14 writes them (examples/agents/ag2/README.md).
    assert AG2.shows("('hello', None)", Shown("call_1", "echo", "hello", True))
    assert AG2.shows('("it\'s", None)', Shown("call_1", "echo", "it's", True))
    assert not AG2.shows("hello", Shown("call_1", "echo", "hello", True))
    failed = Shown("call_3", "city_lookup", "no such city: Atlantis", False)
    assert AG2.shows("Error: Tool call failed: no such city: Atlantis", failed)
    assert not AG2.shows("('no such city: Atlantis', None)", failed)
    assert AG2.read_result("('hello', None)", "call_1", "echo") == "hello"


def test_vercel_ai_shows_a_served_result_or_error_as_the_json_of_its_content_blocks() -> None:
    # As the AI SDK 7 writes them (examples/agents/vercel_ai/README.md): the same
    # form for an MCP error as for a success, JSON as JavaScript writes it.
    hello = Shown("call_1", "echo", "hello", True)
    assert VERCEL_AI.shows('[{"type":"text","text":"hello"}]', hello)
    assert not VERCEL_AI.shows("hello", hello)
    assert not VERCEL_AI.shows('[{"type":"text","text":"hello (cached fallback)"}]', hello)
    quoted = Shown("call_1", "echo", 'say "é"\nnow', True)
    assert VERCEL_AI.shows('[{"type":"text","text":"say \\"é\\"\\nnow"}]', quoted)
    failed = Shown("call_2", "city_lookup", "no such city: Atlantis", False)
    assert VERCEL_AI.shows('[{"type":"text","text":"no such city: Atlantis"}]', failed)
    assert not VERCEL_AI.shows('[{"type":"text","text":"ok, done"}]', failed)
    assert not VERCEL_AI.shows("no such city: Atlantis", failed)
    # Its own tools' results are plain text, read as they are.
    assert VERCEL_AI.read_result("Error: no such city: Atlantis", "call_1", "x") == (
        "Error: no such city: Atlantis"
    )
    assert VERCEL_AI.read_result('[{"type":"text","text":"5"}]', "call_1", "add") == "5"


def test_google_adk_shows_an_mcp_result_as_its_call_tool_result_with_the_error_flag() -> None:
    # As ADK 2.13 on LiteLlm writes them (examples/agents/google_adk/README.md):
    # Python's json.dumps, non-ASCII kept; the flag tells a success from an error.
    hello = Shown("call_1", "echo", "hello", True)
    shown = '{"content": [{"type": "text", "text": "hello"}], "isError": false}'
    assert GOOGLE_ADK.shows(shown, hello)
    assert not GOOGLE_ADK.shows("hello", hello)
    assert not GOOGLE_ADK.shows(shown.replace("false", "true"), hello)
    assert GOOGLE_ADK.shows(
        '{"content": [{"type": "text", "text": "é"}], "isError": false}',
        Shown("call_1", "echo", "é", True),
    )
    failed = Shown("call_2", "city_lookup", "no such city: Atlantis", False)
    error = '{"content": [{"type": "text", "text": "no such city: Atlantis"}], "isError": true}'
    assert GOOGLE_ADK.shows(error, failed)
    # An error shown as a success, or with text added, is not the result.
    assert not GOOGLE_ADK.shows(error.replace("true", "false"), failed)
    assert not GOOGLE_ADK.shows(error.replace("Atlantis", "Atlantis (cached)"), failed)
    assert not GOOGLE_ADK.shows('{"result": "no such city: Atlantis"}', failed)
    # A function tool's text comes wrapped by ADK, and is read without the wrapping.
    assert GOOGLE_ADK.read_result('{"result": "5"}', "call_1", "add") == "5"
    assert GOOGLE_ADK.read_result(shown, "call_1", "echo") == "hello"


def llamaindex_shown(text: str, is_error: bool) -> str:
    """str() of an mcp 2.x CallToolResult, as LlamaIndex's agent workflow shows an MCP
    tool's result (examples/agents/llamaindex/README.md)."""
    return (
        f"meta=None content=[TextContent(type='text', text={text!r}, annotations=None, "
        f"meta=None)] structured_content=None is_error={is_error} result_type='complete'"
    )


def test_llamaindex_shows_a_served_result_as_the_mcp_sdks_call_tool_result() -> None:
    hello = Shown("call_1", "echo", "hello", True)
    assert LLAMAINDEX.shows(llamaindex_shown("hello", False), hello)
    assert LLAMAINDEX.shows(llamaindex_shown("it's", False), Shown("c", "echo", "it's", True))
    assert not LLAMAINDEX.shows("hello", hello)
    assert not LLAMAINDEX.shows(llamaindex_shown("hello (cached fallback)", False), hello)
    assert not LLAMAINDEX.shows(llamaindex_shown("hello", True), hello)
    failed = Shown("call_2", "city_lookup", "no such city: Atlantis", False)
    assert LLAMAINDEX.shows(llamaindex_shown("no such city: Atlantis", True), failed)
    # An error shown as a success, flag and all, is not the error.
    assert not LLAMAINDEX.shows(llamaindex_shown("no such city: Atlantis", False), failed)
    assert not LLAMAINDEX.shows(llamaindex_shown("ok, done", False), failed)
    assert LLAMAINDEX.read_result(llamaindex_shown("hello", False), "call_1", "echo") == "hello"
    assert (
        LLAMAINDEX.read_result(llamaindex_shown("no such city: Atlantis", True), "c", "x")
        == "no such city: Atlantis"
    )


def test_the_built_in_dialects_say_how_their_stacks_answer_and_call() -> None:
    assert (SMOLAGENTS.answer_tool, SMOLAGENTS.answer_argument) == ("final_answer", "answer")
    assert SMOLAGENTS.flattens and not CHAT.flattens
    assert SMOLAGENTS.model_calls and not SMOLAGENTS_CODE.model_calls
    assert CHAT.answer_tool is None


ONCE = "dialect 'bad': the form {!r} must show the result once"
BLOCK = "dialect 'bad': its block must hold {results} once, and no other slot"
BOTH = "dialect 'bad': give both answer_tool and answer_argument"


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        (
            {"results_in": "tool"},
            'dialect \'bad\': results_in must be "tool_message" or "user_message"',
        ),
        ({"success": ("{results}",)}, ONCE.format("{results}")),
        ({"error": ("no result",)}, ONCE.format("no result")),
        ({"success": ("{result} and {result|json}",)}, ONCE.format("{result} and {result|json}")),
        ({"error_blocks": ("Error",)}, ONCE.format("Error")),
        (
            {"success": ("{any}{result}",)},
            "dialect 'bad': the form '{any}{result}' may not hold {any}",
        ),
        (
            {"error": ("{result}{any}",)},
            "dialect 'bad': the form '{result}{any}' may not hold {any}",
        ),
        ({"block": "{any}{results}"}, BLOCK),
        ({"block": "Observation"}, BLOCK),
        ({"block": "{results}{results}"}, BLOCK),
        ({"block": "{call_id}: {results}"}, BLOCK),
        ({"answer_tool": "final_answer"}, BOTH),
        ({"answer_argument": "answer"}, BOTH),
    ],
)
def test_a_dialect_that_cannot_hold_is_refused_where_it_is_declared(
    fields: dict[str, object], error: str
) -> None:
    with pytest.raises(ValueError) as refused:
        Dialect("bad", **fields)  # type: ignore[arg-type]
    assert str(refused.value) == error


def test_every_built_in_dialect_holds() -> None:
    # A tool_message dialect may leave the block alone; each form is well made.
    for dialect in (CHAT, SMOLAGENTS, SMOLAGENTS_CODE, PYDANTIC_AI, AG2, LLAMAINDEX):
        assert dialect.block.count("{results}") == 1


# --- where the wire shows each result ----------------------------------------------


def test_the_wire_ties_each_result_to_its_call_the_way_the_dialect_says() -> None:
    from zeroclaw_eval.agents.wire import Exchange, calls_from_wire, wire_calls
    from zeroclaw_eval.protocol import ModelReply, ToolCallRequest

    def calls(*names: str) -> ModelReply:
        return ModelReply(
            None, tuple(ToolCallRequest(f"call_{n}", name, {}) for n, name in enumerate(names))
        )

    task = {"role": "user", "content": "New task:\nGo"}
    first = {"role": "assistant", "content": "Calling tools:\n[...]"}
    second = {"role": "assistant", "content": "Calling tools:\n[...]"}
    exchanges = [
        Exchange(0, [task], calls("lookup")),
        Exchange(0, [task, first, {"role": "user", "content": "Observation:\none"}], calls("echo")),
        Exchange(
            0,
            [
                task,
                first,
                {"role": "user", "content": "Observation:\none"},
                second,
                {"role": "user", "content": None},
                {"role": "user", "content": "a later message"},
            ],
            calls("final_answer"),
        ),
    ]
    # Each step's results are the first user message after the last assistant one.
    read = calls_from_wire(exchanges, SMOLAGENTS)
    assert [(c.name, c.result, c.succeeded) for c in read] == [
        ("lookup", "one", True),
        ("echo", "", True),  # a message with no text shows an empty result
    ]
    assert [c.shown for c in wire_calls(exchanges, SMOLAGENTS)] == ["Observation:\none", ""]
    # Read as tool messages, none came back; final_answer is a call then.
    as_chat = calls_from_wire(exchanges, CHAT)
    assert [(c.name, c.succeeded) for c in as_chat] == [
        ("lookup", False),
        ("echo", False),
        ("final_answer", False),
    ]
    assert as_chat[0].result == (
        "tool 'lookup': no result came back: the agent sent no role \"tool\" message with "
        "tool_call_id 'call_0' after the call"
    )
    assert calls_from_wire(exchanges[:2], SMOLAGENTS)[:1] == read[:1]
    unanswered = calls_from_wire(exchanges[:1], SMOLAGENTS)
    assert unanswered[0].result == (
        "tool 'lookup': no result came back: the agent showed the model no result for it in "
        "its next request"
    )
    # A step of one call whose own tool failed: the framework's error text is read back.
    # A step of one call whose own tool failed: the framework's error text is read back,
    # from the task's own message when smolagents kept no assistant message for it.
    failure = (
        "Error:\nError executing tool 'city' with arguments {}: ValueError: no such city\n"
        "Please try again or use another tool\nNow let's retry: take care not to repeat "
        "previous errors! If you have retried several times, try a completely different "
        "approach.\n"
    )
    failed = [
        Exchange(0, [task], calls("city")),
        Exchange(0, [task, first, {"role": "user", "content": failure}], calls()),
    ]
    assert [(c.result, c.succeeded) for c in calls_from_wire(failed, SMOLAGENTS)] == [
        ("{}: ValueError: no such city", True)
    ]
    merged = {"role": "user", "content": task["content"] + "\n" + failure}
    unkept = [Exchange(0, [task], calls("city")), Exchange(0, [merged], calls())]
    assert [c.result for c in calls_from_wire(unkept, SMOLAGENTS)] == [
        "{}: ValueError: no such city"
    ]
    # A tool message with no text is an empty result, tied to its call.
    tool_turn = [
        Exchange(0, [task], calls("echo")),
        Exchange(0, [task, {"role": "tool", "tool_call_id": "call_0", "content": None}], calls()),
    ]
    assert [(c.result, c.succeeded) for c in calls_from_wire(tool_turn)] == [("", True)]


def test_the_wire_reads_odd_but_possible_requests_without_guessing() -> None:
    from zeroclaw_eval.agents.wire import Exchange, calls_from_wire
    from zeroclaw_eval.protocol import ModelReply, ToolCallRequest

    task = {"role": "user", "content": "Go"}

    def reply(*calls: tuple[str, str]) -> ModelReply:
        return ModelReply(None, tuple(ToolCallRequest(i, name, {}) for i, name in calls))

    # A reply that answers and calls in one: the answer is skipped, the call kept.
    both = [
        Exchange(0, [task], reply(("call_1", "final_answer"), ("call_2", "echo"))),
        Exchange(0, [task, {"role": "assistant", "content": "x"}], reply()),
    ]
    assert [c.name for c in calls_from_wire(both, SMOLAGENTS)] == ["echo"]
    # A call id reused in every step: the n-th call with it gets the n-th result.
    reused = []
    history: list[dict[str, object]] = [task]
    for step in range(3):
        reused.append(Exchange(0, list(history), reply(("call_1", "echo"))))
        history += [
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "tool", "tool_call_id": "call_1", "content": f"result {step}"},
        ]
    reused.append(Exchange(0, list(history), reply()))
    assert [c.result for c in calls_from_wire(reused)] == ["result 0", "result 1", "result 2"]
    # Only a tool message with its call's id is a result.
    stray = [
        Exchange(0, [task], reply(("call_1", "echo"))),
        Exchange(
            0,
            [
                task,
                {"role": "user", "tool_call_id": "call_1", "content": "not a result"},
                {"role": "tool", "content": "no id"},
            ],
            reply(),
        ),
    ]
    assert [c.succeeded for c in calls_from_wire(stray)] == [False]
    # A flattening agent that keeps no assistant message: its last user message shows
    # the step's results (smolagents, when a step fails), and none is no result.
    forgot = [
        Exchange(0, [task], reply(("call_1", "echo"))),
        Exchange(0, [task, {"role": "user", "content": "Observation:\nhi"}], reply()),
    ]
    assert [(c.result, c.succeeded) for c in calls_from_wire(forgot, SMOLAGENTS)] == [("hi", True)]
    silent = [forgot[0], Exchange(0, [{"role": "system", "content": "x"}], reply())]
    assert [c.succeeded for c in calls_from_wire(silent, SMOLAGENTS)] == [False]
