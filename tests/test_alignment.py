"""The pairing of expected steps with calls is optimal, checked against brute force.

On small inputs every pairing is enumerated; the one the harness finds must be
valid (each pair allowed, no call or step used twice, in order where asked) and
as good as the best: as many required steps paired, then as many steps in all.
A first-fit pairing fails these properties (the example tests show where).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations, permutations

from hypothesis import given
from hypothesis import strategies as st

from zeroclaw_eval.grading.alignment import any_order, in_order

Candidates = list[list[int]]


@st.composite
def problems(draw: st.DrawFn) -> tuple[Candidates, list[bool], int]:
    """Up to 5 steps and 6 calls, each step allowed a random set of calls."""
    steps = draw(st.integers(0, 5))
    calls = draw(st.integers(0, 6))
    candidates = [
        sorted(draw(st.sets(st.integers(0, calls - 1), max_size=calls))) if calls else []
        for _ in range(steps)
    ]
    required = [draw(st.booleans()) for _ in range(steps)]
    return candidates, required, calls


def all_pairings(steps: int, calls: int, ordered: bool) -> Iterator[dict[int, int]]:
    """Every pairing of steps with distinct calls (ordered: calls increase with steps)."""
    for size in range(min(steps, calls) + 1):
        for chosen_steps in combinations(range(steps), size):
            call_sets: Iterator[Sequence[int]] = (
                combinations(range(calls), size) if ordered else permutations(range(calls), size)
            )
            for chosen_calls in call_sets:
                yield dict(zip(chosen_steps, chosen_calls, strict=True))


def score(pairs: dict[int, int], required: list[bool]) -> tuple[int, int]:
    return sum(required[step] for step in pairs), len(pairs)


def best(
    candidates: Candidates, required: list[bool], calls: int, ordered: bool
) -> tuple[int, int]:
    return max(
        score(pairs, required)
        for pairs in all_pairings(len(candidates), calls, ordered)
        if all(call in candidates[step] for step, call in pairs.items())
    )


def assert_valid(pairs: dict[int, int], candidates: Candidates, ordered: bool) -> None:
    assert all(call in candidates[step] for step, call in pairs.items())
    assert len(set(pairs.values())) == len(pairs)
    if ordered:
        in_step_order = [pairs[step] for step in sorted(pairs)]
        assert in_step_order == sorted(in_step_order)


@given(problems())
def test_in_order_pairing_is_valid_and_as_good_as_brute_force(
    problem: tuple[Candidates, list[bool], int],
) -> None:
    candidates, required, calls = problem
    pairs = in_order(candidates, required, calls)
    assert_valid(pairs, candidates, ordered=True)
    assert score(pairs, required) == best(candidates, required, calls, ordered=True)


@given(problems())
def test_any_order_pairing_is_valid_and_as_good_as_brute_force(
    problem: tuple[Candidates, list[bool], int],
) -> None:
    candidates, required, calls = problem
    pairs = any_order(candidates, required, calls)
    assert_valid(pairs, candidates, ordered=False)
    assert score(pairs, required) == best(candidates, required, calls, ordered=False)


@given(problems())
def test_any_order_pairs_the_most_steps_and_the_most_required_steps_at_once(
    problem: tuple[Candidates, list[bool], int],
) -> None:
    # What a closed mode needs: one pairing that leaves no required step and no call
    # over, when any pairing does; so both maxima must be reached together.
    candidates, required, calls = problem
    pairs = any_order(candidates, required, calls)
    most_pairs = max(
        len(p)
        for p in all_pairings(len(candidates), calls, ordered=False)
        if all(call in candidates[step] for step, call in p.items())
    )
    assert len(pairs) == most_pairs


def test_a_loose_step_does_not_take_the_only_call_a_strict_step_can_use() -> None:
    # Step 0 accepts calls 0 and 1, step 1 only call 0: first fit gives step 0 the
    # call 0 and leaves step 1 with nothing.
    assert any_order([[0, 1], [0]], [True, True], 2) == {0: 1, 1: 0}


def test_in_order_skips_an_early_match_that_would_block_the_rest() -> None:
    # Step 0 could take call 0 or call 2; taking call 2 (a late first fit from the
    # right, or a greedy optional match) would leave step 1 nothing after it.
    assert in_order([[0, 2], [1]], [True, True], 3) == {0: 0, 1: 1}
    # An optional step that fits only the last call does not push a required one out.
    assert 1 in in_order([[1], [0, 1]], [False, True], 2)


def test_required_steps_win_over_optional_ones() -> None:
    # One call, wanted by an optional step first and a required one second.
    assert any_order([[0], [0]], [False, True], 1) == {1: 0}
    assert in_order([[0], [0]], [False, True], 1) == {1: 0}


def test_one_required_pair_outweighs_every_optional_pair_together() -> None:
    # Four optional steps, each fitting a call after the one the last, required,
    # step needs: pairing them all would leave the required step unpaired.
    assert in_order([[1], [2], [3], [4], [0]], [False] * 4 + [True], 5) == {4: 0}


def test_in_order_pairs_every_call_when_a_step_that_fits_any_call_comes_first() -> None:
    # Step 0 fits every call (the whole-row path of the programme); the best pairing
    # leaves it unpaired so that steps 1 to 3 take the three calls, as exact needs.
    assert in_order([[0, 1, 2], [0, 2], [0, 1], [1, 2]], [False, True, False, False], 3) == {
        1: 0,
        2: 1,
        3: 2,
    }
