"""Batches in ``tool_sequence``: steps that share a ``batch`` number pair with calls
the model asked for in one reply, in any order among them, and the batch keeps its
place among the other steps.

The pairing is graded in process over recorded calls (each with the reply that asked
for it); the reply index is pinned end to end for the reference loop and for a
bridged agent read off the wire, and ``eval check`` finds a batch the script never
asks for together.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zeroclaw_eval import AdmissionError, RecordedCall, Registry, RunMode, RunRecord
from zeroclaw_eval.case.admission import admit_data

from .bridged_helpers import command, configure, run, write_suite
from .conftest import echo_case, zeroclaw

SCRIPTED = ("echo", "search", "file_write")


def fixture(*entries: dict[str, Any], **more: Any) -> dict[str, Any]:
    """One turn whose first reply calls each scripted tool, with ``tool_sequence`` entries."""
    case = echo_case(expects={"tool_sequence": list(entries), **more})
    calls = [{"id": f"c{n}", "name": name, "arguments": {}} for n, name in enumerate(SCRIPTED)]
    case["turns"][0]["steps"][0]["response"]["tool_calls"] = calls
    return case


def entry(mode: str, *steps: dict[str, Any]) -> dict[str, Any]:
    return {"mode": mode, "steps": list(steps)}


def step(tool: str, batch: int | None = None, **extra: Any) -> dict[str, Any]:
    return {"tool": tool, **({} if batch is None else {"batch": batch}), **extra}


def call(name: str, reply: int | None) -> RecordedCall:
    return RecordedCall(0, "c", name, {}, "done", True, reply)


def graded(
    registry: Registry, replay: RunMode, calls: list[RecordedCall], *entries: dict[str, Any]
) -> tuple[bool, str, str]:
    case = admit_data(fixture(*entries), registry, replay, source="case.json")
    (check,) = case.grade(RunRecord(responses=["ok"], calls=calls))
    return check.passed, check.check, check.detail


BATCH_THEN_WRITE = entry("in_order", step("echo", 0), step("search", 0), step("file_write"))


def test_a_batch_pairs_with_one_reply_in_any_order_then_the_next_step(
    registry: Registry, replay: RunMode
) -> None:
    calls = [call("search", 0), call("echo", 0), call("file_write", 1)]
    passed, name, detail = graded(registry, replay, calls, BATCH_THEN_WRITE)
    assert passed, detail
    assert name == "tool_sequence: in_order [echo, search] -> file_write"
    assert detail == (
        "paired: step 0 echo -> echo[0] (turn 0, call 1), step 1 search -> "
        "search[0] (turn 0, call 0), step 2 file_write -> file_write[0] (turn 0, call 2)"
    )


def test_the_same_calls_asked_for_one_by_one_fail_the_batch(
    registry: Registry, replay: RunMode
) -> None:
    calls = [call("echo", 0), call("search", 1), call("file_write", 2)]
    passed, _, detail = graded(registry, replay, calls, BATCH_THEN_WRITE)
    assert not passed
    assert detail.startswith(
        "batch 0 (steps 0-1: echo, search): no reply asked for all of them after the calls "
        "the steps before took (calls by reply: reply 0: echo; reply 1: search; "
        "reply 2: file_write); paired: step 2 file_write"
    )


def test_a_batch_takes_a_whole_reply_after_the_steps_before_it(
    registry: Registry, replay: RunMode
) -> None:
    """``echo`` then the batch: all three in one reply puts echo inside the batch's
    reply, which is not after it."""
    later = entry("in_order", step("echo"), step("search", 1), step("file_write", 1))
    together = [call("echo", 0), call("search", 0), call("file_write", 0)]
    assert not graded(registry, replay, together, later)[0]
    apart = [call("echo", 0), call("file_write", 1), call("search", 1)]
    assert graded(registry, replay, apart, later)[0]


def test_a_batch_before_its_reply_order_fails(registry: Registry, replay: RunMode) -> None:
    calls = [call("file_write", 0), call("echo", 1), call("search", 1)]
    assert not graded(registry, replay, calls, BATCH_THEN_WRITE)[0]


def test_a_call_no_reply_asked_for_never_fills_a_batch(registry: Registry, replay: RunMode) -> None:
    calls = [call("echo", None), call("search", None), call("file_write", 1)]
    assert not graded(registry, replay, calls, BATCH_THEN_WRITE)[0]


def test_exact_counts_a_batch_reply_with_one_call_more_as_an_extra_call(
    registry: Registry, replay: RunMode
) -> None:
    exact = entry("exact", step("echo", 0), step("search", 0), step("file_write"))
    calls = [call("echo", 0), call("search", 0), call("echo", 0), call("file_write", 1)]
    passed, _, detail = graded(registry, replay, calls, exact)
    assert not passed
    assert detail.startswith(
        "extra call echo[1] (turn 0, call 2) pairs with no step (exact allows no other call)"
    )
    in_order = entry("in_order", step("echo", 0), step("search", 0), step("file_write"))
    assert graded(registry, replay, calls, in_order)[0]


def test_the_pairing_is_the_best_one_not_the_first_reply_that_fits(
    registry: Registry, replay: RunMode
) -> None:
    """Reply 0 holds an echo and a search, so it fits the batch; taking it leaves no
    echo for the step before. The best pairing takes reply 1 for the batch."""
    before = entry("in_order", step("echo"), step("echo", 2), step("search", 2))
    calls = [call("echo", 0), call("search", 0), call("echo", 1), call("search", 1)]
    passed, _, detail = graded(registry, replay, calls, before)
    assert passed, detail
    assert detail.startswith("paired: step 0 echo -> echo[0] (turn 0, call 0), step 1 echo ->")


@pytest.mark.parametrize(
    ("steps", "mode", "field", "message"),
    [
        (
            [step("echo", 0), step("search", 0)],
            "unordered",
            "steps[0].batch=0",
            "batches are read in in_order and exact, which keep the order across them; "
            "unordered pairs in any order",
        ),
        (
            [step("echo", 0), step("search")],
            "in_order",
            "steps[0].batch=0",
            "batch 0 has one step: a batch groups two or more calls of one reply",
        ),
        (
            [step("echo", 0), step("search"), step("file_write", 0)],
            "in_order",
            "steps[2].batch=0",
            "batch 0 is split: its steps must be next to each other (it began at step 0)",
        ),
        (
            [step("echo", 0), step("search", 0, optional=True), step("file_write")],
            "exact",
            "steps[1].optional=true",
            "a batch's steps are asked for together: a step of one cannot be optional",
        ),
    ],
    ids=["unordered", "one_step", "split", "optional"],
)
def test_admission_refuses_a_batch_that_says_nothing_or_cannot_be_read(
    registry: Registry,
    replay: RunMode,
    steps: list[dict[str, Any]],
    mode: str,
    field: str,
    message: str,
) -> None:
    with pytest.raises(AdmissionError) as refused:
        admit_data(fixture(entry(mode, *steps)), registry, replay, source="case.json")
    assert refused.value.field == f"expects.tool_sequence[0].{field}"
    assert refused.value.message == message


def two_replies_case(first: list[str], second: list[str], batch: list[str]) -> dict[str, Any]:
    """A turn whose model asks for ``first`` in one reply, ``second`` in the next,
    then answers; the expectation: ``batch`` in one reply."""
    calls = iter(range(100))

    def reply(names: list[str]) -> dict[str, Any]:
        return {
            "response": {
                "type": "tool_calls",
                "tool_calls": [
                    {"id": f"c{next(calls)}", "name": n, "arguments": {"message": n}} for n in names
                ],
            }
        }

    done = {"response": {"type": "text", "content": "done"}}
    expected = entry("in_order", *(step(name, 0) for name in batch))
    return {
        "model_name": "batches",
        "turns": [{"user_input": "go", "steps": [reply(first), reply(second), done]}],
        "expects": {"tool_sequence": [expected]},
    }


def test_the_reference_loop_and_eval_check_tell_a_batch_from_calls_one_by_one(
    tmp_path: Path,
) -> None:
    together = two_replies_case(["echo", "echo"], ["echo"], ["echo", "echo"])
    apart = two_replies_case(["echo"], ["echo"], ["echo", "echo"])
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "together.json").write_text(json.dumps(together), encoding="utf-8")
    (suite / "apart.json").write_text(json.dumps(apart), encoding="utf-8")
    ran = zeroclaw("eval", "run", "--suite", suite, "--no-history", "--format", "json")
    assert ran.returncode == 1
    verdicts = {Path(c["source"]).stem: c["passed"] for c in json.loads(ran.stdout)["cases"]}
    assert verdicts == {"apart": False, "together": True}
    checked = zeroclaw("eval", "check", suite / "apart.json")
    assert checked.returncode == 1
    assert (
        "apart.json: expects.tool_sequence[0].steps[0].batch=0: no scripted reply asks for "
        "echo, echo together: this batch can never pair, so the entry can never pass"
    ) in checked.stderr
    assert zeroclaw("eval", "check", suite / "together.json").returncode == 0


def test_a_bridged_agent_batch_is_read_from_the_reply_on_the_wire(tmp_path: Path) -> None:
    config = configure(tmp_path / "project", command("echo_agent.py"))
    together = two_replies_case(["echo", "echo"], ["echo"], ["echo", "echo"])
    assert run(config, write_suite(tmp_path / "together", together)).exit_code == 0
    apart = two_replies_case(["echo"], ["echo", "echo"], ["echo", "echo"])
    # The batch is in the second reply: still a batch, and nothing before it.
    assert run(config, write_suite(tmp_path / "second", apart)).exit_code == 0
    alone = two_replies_case(["echo"], ["echo"], ["echo", "echo"])
    failed = run(config, write_suite(tmp_path / "alone", alone))
    assert failed.exit_code == 1
    assert "batch 0 (steps 0-1: echo, echo): no reply asked for all of them" in failed.stdout


def test_a_batch_whose_reply_differs_in_arguments_names_the_pointer_and_both_values(
    registry: Registry, replay: RunMode
) -> None:
    """The reply asks for both tools, so the miss is in the arguments: the detail says
    which step, which call, and where they differ, not only that no reply fits."""
    batch = entry(
        "in_order",
        step("echo", 0, arguments={"q": 1}),
        step("search", 0, arguments={"q": 5}),
    )
    calls = [
        RecordedCall(0, "c0", "echo", {"q": 1}, "done", True, 0),
        RecordedCall(0, "c1", "search", {"q": 4}, "done", True, 0),
    ]
    passed, _, detail = graded(registry, replay, calls, batch)
    assert not passed
    assert detail.startswith(
        "batch 0 (steps 0-1: echo, search): no reply asked for all of them after the calls "
        "the steps before took (calls by reply: reply 0: echo, search; nearest: reply 0, "
        "step 1 search and search[0] (turn 0, call 1), arguments differ: /q: expected 5, "
        "got 4)"
    )


# --- the pairing is the best one: checked against every pairing of small runs -------


def _best_by_enumeration(
    blocks: list[list[int]],
    candidates: list[list[int]],
    required: list[bool],
    replies: list[int],
) -> int:
    """The best score any valid pairing reaches, found by trying them all: a block of
    one step takes one call, a batch a whole reply (a complete matching inside it),
    and the blocks' spans of calls come in the blocks' order."""
    from itertools import product

    from zeroclaw_eval.grading import alignment

    heavy = len(candidates) + 2
    options: list[list[tuple[int, int, int] | None]] = []
    for block in blocks:
        chosen: list[tuple[int, int, int] | None] = [None]
        if len(block) == 1:
            weight = heavy if required[block[0]] else 1
            chosen += [(call, call, weight) for call in candidates[block[0]]]
        else:
            for reply in sorted(set(replies)):
                held = [p for p, r in enumerate(replies) if r == reply]
                inside = [[p for p in held if p in candidates[s]] for s in block]
                if len(alignment.any_order(inside, [True] * len(block), len(replies))) == len(
                    block
                ):
                    chosen.append((held[0], held[-1], heavy * len(block)))
        options.append(chosen)
    best = 0
    for picked in product(*options):
        spans = [span for span in picked if span is not None]
        if all(a[1] < b[0] for a, b in pairwise(spans)):
            best = max(best, sum(span[2] for span in spans))
    return best


@st.composite
def batched_runs(draw: st.DrawFn) -> tuple[list[list[int]], list[list[int]], list[bool], list[int]]:
    sizes = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    blocks, step = [], 0
    for size in sizes:
        blocks.append(list(range(step, step + size)))
        step += size
    calls = draw(st.integers(0, 6))
    # Replies: consecutive runs of calls, as a model's replies are dispatched.
    cuts = sorted(draw(st.sets(st.integers(1, max(calls - 1, 1)), max_size=3)))
    replies = [sum(1 for cut in cuts if cut <= p) for p in range(calls)]
    candidates = [
        sorted(draw(st.sets(st.integers(0, max(calls - 1, 0)), max_size=calls))) if calls else []
        for _ in range(step)
    ]
    required = [len(block) > 1 or draw(st.booleans()) for block in blocks for _ in block]
    return blocks, candidates, required, replies


@given(batched_runs())
@settings(max_examples=300, deadline=None)
def test_the_batched_pairing_reaches_the_best_score_any_valid_pairing_reaches(
    run: tuple[list[list[int]], list[list[int]], list[bool], list[int]],
) -> None:
    from zeroclaw_eval.builtin.sequence import in_order_batched

    blocks, candidates, required, replies = run
    calls = [
        RecordedCall(0, f"c{p}", "t", {}, "ok", True, reply) for p, reply in enumerate(replies)
    ]
    pairs = in_order_batched(blocks, candidates, required, calls)
    heavy = len(candidates) + 2
    # What it found is a valid pairing ...
    assert len(set(pairs.values())) == len(pairs)
    assert all(call in candidates[step] for step, call in pairs.items())
    spans = []
    for block in blocks:
        taken = [pairs[s] for s in block if s in pairs]
        if not taken:
            continue
        assert len(taken) == len(block)  # a batch pairs whole or not at all
        if len(block) > 1:
            reply = {replies[c] for c in taken}
            assert len(reply) == 1
            held = [p for p, r in enumerate(replies) if r in reply]
            spans.append((held[0], held[-1]))
        else:
            spans.append((taken[0], taken[0]))
    assert all(a[1] < b[0] for a, b in pairwise(spans))
    # ... and the best one.
    score = sum(heavy if required[s] else 1 for s in pairs)
    assert score == _best_by_enumeration(blocks, candidates, required, replies)


def test_eval_check_reads_a_batch_in_its_turn_after_a_step_of_its_own(tmp_path: Path) -> None:
    """Turn 1 asks for two echoes together, turn 0 for one: a batch scoped to turn 0
    can never pair, one scoped to turn 1 can; a single step before it is no batch."""
    first = {
        "response": {
            "type": "tool_calls",
            "tool_calls": [{"id": "a", "name": "echo", "arguments": {"message": "x"}}],
        }
    }
    both = {
        "response": {
            "type": "tool_calls",
            "tool_calls": [
                {"id": "b", "name": "echo", "arguments": {"message": "y"}},
                {"id": "c", "name": "echo", "arguments": {"message": "z"}},
            ],
        }
    }
    done = {"response": {"type": "text", "content": "done"}}

    def case(turn: int) -> dict[str, Any]:
        expected = {
            "mode": "in_order",
            "turn": turn,
            "steps": [{"tool": "echo"}, {"tool": "echo", "batch": 0}, {"tool": "echo", "batch": 0}],
        }
        return {
            "model_name": f"turn-{turn}",
            "turns": [
                {"user_input": "one", "steps": [first, done]},
                {"user_input": "two", "steps": [first, both, done]},
            ],
            "expects": {"tool_sequence": [expected]},
        }

    for turn, code in ((0, 1), (1, 0)):
        path = tmp_path / f"turn{turn}.json"
        path.write_text(json.dumps(case(turn)), encoding="utf-8")
        checked = zeroclaw("eval", "check", path)
        assert checked.returncode == code, checked.stderr
