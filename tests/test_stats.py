"""pass@k, pass^k, the Wilson interval and Fisher's exact test, against their
definitions (brute-force enumeration) and published reference values."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zeroclaw_eval.util.stats import fisher_exact, pass_at_k, pass_hat_k, wilson_interval


def draws(passes: int, attempts: int, k: int) -> list[tuple[bool, ...]]:
    outcomes = [True] * passes + [False] * (attempts - passes)
    return list(itertools.combinations(outcomes, k))


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))), st.data())
def test_pass_at_k_and_pass_hat_k_are_the_draw_frequencies(counts, data):
    passes, attempts = counts
    k = data.draw(st.integers(1, attempts))
    every = draws(passes, attempts, k)
    assert pass_at_k(passes, attempts, k) == pytest.approx(sum(any(d) for d in every) / len(every))
    assert pass_hat_k(passes, attempts, k) == pytest.approx(sum(all(d) for d in every) / len(every))


def test_known_values():
    assert pass_at_k(3, 10, 1) == pytest.approx(0.3)
    assert pass_at_k(2, 4, 2) == pytest.approx(1 - 1 / 6)
    assert pass_hat_k(2, 4, 2) == pytest.approx(1 / 6)
    assert pass_at_k(0, 5, 5) == 0.0
    assert pass_hat_k(5, 5, 5) == 1.0


@pytest.mark.parametrize(("passes", "attempts", "k"), [(1, 3, 4), (1, 3, 0), (4, 3, 1)])
def test_impossible_counts_are_refused(passes, attempts, k):
    with pytest.raises(ValueError):
        pass_at_k(passes, attempts, k)
    with pytest.raises(ValueError):
        pass_hat_k(passes, attempts, k)


@pytest.mark.parametrize(
    ("passes", "attempts", "low", "high"),
    [
        # Reference values (Newcombe 1998, table I; and R's prop.test without correction).
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (81, 263, 0.2553, 0.3662),
        (10, 10, 0.7225, 1.0),
    ],
)
def test_wilson_interval_matches_reference_values(passes, attempts, low, high):
    got = wilson_interval(passes, attempts)
    assert got == pytest.approx((low, high), abs=1e-4)


def test_wilson_interval_of_nothing_is_everything():
    assert wilson_interval(0, 0) == (0.0, 1.0)


def fisher_by_definition(a: int, b: int, c: int, d: int) -> float:
    """Every table with the same margins, summed where no more likely than the observed."""
    row1, col1, total = a + b, a + c, a + b + c + d

    def probability(x: int) -> float:
        return math.comb(row1, x) * math.comb(total - row1, col1 - x) / math.comb(total, col1)

    observed = probability(a)
    tables = range(max(0, col1 - (total - row1)), min(row1, col1) + 1)
    return sum(probability(x) for x in tables if probability(x) <= observed * (1 + 1e-7))


@pytest.mark.parametrize(
    ("table", "p"),
    [
        # R: fisher.test(matrix(c(3, 1, 1, 3), 2)) -- the lady tasting tea.
        ((3, 1, 1, 3), 0.4857),
        # R: fisher.test(matrix(c(10, 0, 0, 10), 2))
        ((10, 0, 0, 10), 1.083e-05),
        # R: fisher.test(matrix(c(9, 1, 3, 7), 2))
        ((9, 1, 3, 7), 0.01977),
        ((1, 0, 0, 1), 1.0),
        ((5, 5, 5, 5), 1.0),
    ],
)
def test_fisher_exact_matches_r(table, p):
    assert fisher_exact(*table) == pytest.approx(p, rel=1e-3)


@given(st.tuples(*[st.integers(0, 12)] * 4))
def test_fisher_exact_is_its_definition_and_symmetric(table):
    a, b, c, d = table
    p = fisher_exact(a, b, c, d)
    if a + b + c + d:
        assert p == pytest.approx(min(1.0, fisher_by_definition(a, b, c, d)))
    assert 0.0 <= p <= 1.0
    assert fisher_exact(c, d, a, b) == pytest.approx(p)  # swapping the runs
    assert fisher_exact(b, a, d, c) == pytest.approx(p)  # swapping pass and fail


def test_fisher_exact_handles_large_tables():
    assert fisher_exact(1000, 0, 900, 100) < 1e-20
    assert fisher_exact(500, 500, 500, 500) == pytest.approx(1.0)
