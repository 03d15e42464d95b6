"""The statistics of repeated attempts: pass@k, pass^k, Wilson intervals, Fisher's test.

Pure functions on counts, with no third-party dependency: a case ran ``n`` times
and passed ``c`` of them.

- ``pass@k`` is the chance that at least one of ``k`` attempts drawn from the ``n``
  passes, by the unbiased estimator of Chen et al. (2021), "Evaluating Large
  Language Models Trained on Code": ``1 - C(n - c, k) / C(n, k)``.
- ``pass^k`` is the chance that all ``k`` drawn attempts pass, as in the tau-bench
  paper (Yao et al., 2024): ``C(c, k) / C(n, k)``. It measures reliability where
  pass@k measures capability.
- The Wilson score interval bounds a pass rate honestly for small ``n`` (it never
  leaves [0, 1] and is not degenerate at 0 or ``n`` passes).
- Fisher's exact test says whether two pass rates differ by more than chance.
"""

from __future__ import annotations

import math

#: The z value of a two-sided 95 % interval.
Z_95 = 1.959963984540054


def _check_counts(passes: int, attempts: int) -> None:
    if attempts < 0 or passes < 0 or passes > attempts:
        raise ValueError(f"need 0 <= passes <= attempts, got {passes} of {attempts}")


def pass_at_k(passes: int, attempts: int, k: int) -> float:
    """The unbiased estimate of pass@k from ``passes`` out of ``attempts`` (k <= attempts)."""
    _check_counts(passes, attempts)
    if not 1 <= k <= attempts:
        raise ValueError(f"k={k} must be between 1 and the number of attempts ({attempts})")
    if attempts - passes < k:  # every draw of k holds a pass
        return 1.0
    return 1.0 - math.comb(attempts - passes, k) / math.comb(attempts, k)


def pass_hat_k(passes: int, attempts: int, k: int) -> float:
    """pass^k: the chance that ``k`` attempts drawn without replacement all pass."""
    _check_counts(passes, attempts)
    if not 1 <= k <= attempts:
        raise ValueError(f"k={k} must be between 1 and the number of attempts ({attempts})")
    return math.comb(passes, k) / math.comb(attempts, k)


def wilson_interval(passes: int, attempts: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of the pass rate; ``(0.0, 1.0)`` when nothing ran."""
    _check_counts(passes, attempts)
    if attempts == 0:
        return 0.0, 1.0
    rate = passes / attempts
    z2 = z * z
    centre = (rate + z2 / (2 * attempts)) / (1 + z2 / attempts)
    spread = (z / (1 + z2 / attempts)) * math.sqrt(
        rate * (1 - rate) / attempts + z2 / (4 * attempts * attempts)
    )
    return max(0.0, centre - spread), min(1.0, centre + spread)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """The two-sided p-value of Fisher's exact test on the table ``[[a, b], [c, d]]``.

    Rows are the two runs, columns passes and failures. With the margins fixed,
    the first cell follows a hypergeometric law; the p-value sums the
    probabilities of every table no more likely than the one observed (the usual
    two-sided definition, as R's ``fisher.test`` and SciPy compute it).
    """
    for value in (a, b, c, d):
        if value < 0:
            raise ValueError(f"a contingency table holds counts, got {value}")
    row1, col1, total = a + b, a + c, a + b + c + d
    low, high = max(0, col1 - (total - row1)), min(row1, col1)
    if low == high:
        return 1.0
    denominator = math.comb(total, col1)

    def probability(x: int) -> float:
        return math.comb(row1, x) * math.comb(total - row1, col1 - x) / denominator

    observed = probability(a)
    # A relative tolerance, as R uses, so that tables equally likely in exact
    # arithmetic are not split by rounding.
    limit = observed * (1 + 1e-7)
    p = sum(p_x for x in range(low, high + 1) if (p_x := probability(x)) <= limit)
    return min(1.0, p)
