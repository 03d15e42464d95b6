"""Optimal pairing of expected steps with observed calls.

Each step lists the calls it could pair with (``candidates``); a pairing gives
each step at most one call and each call at most one step. The best pairing
pairs as many *required* steps as possible and, among those, as many steps in
all: so a run passes a mode exactly when its best pairing leaves no required
step (and, where the mode says so, no call) unpaired.

A first fit is not enough: a loose step that takes the only call a stricter step
could use makes a passing run fail. Both searches here are exact:
:func:`in_order` (pairs keep the order of the steps) is a dynamic programme over
steps and calls, :func:`any_order` a maximum bipartite matching by augmenting
paths, required steps first.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate


def in_order(
    candidates: Sequence[Sequence[int]], required: Sequence[bool], calls: int
) -> dict[int, int]:
    """The best pairing whose calls come in the order of their steps: step -> call.

    ``candidates[i]`` holds the calls (``0 <= call < calls``) step ``i`` could
    pair with; ``required[i]`` says whether it must pair. Time and memory
    O(steps x calls), each row a C-speed running maximum.
    """
    steps = len(candidates)
    # Weights make the order of preference lexicographic: one more required
    # pair outweighs any number of optional ones (there are fewer than steps + 1).
    heavy = steps + 2
    rows = [[0] * (calls + 1)]
    for step in range(steps):
        previous = rows[-1]
        weight = heavy if required[step] else 1
        row = previous[:]
        for call in candidates[step]:
            gained = previous[call] + weight
            if gained > row[call + 1]:
                row[call + 1] = gained
        rows.append(list(accumulate(row, max)))
    pairs: dict[int, int] = {}
    step, call = steps, calls
    while step and call:
        score = rows[step][call]
        # On a tie, leave the later step unpaired: a detail then reads from the
        # first step that went wrong.
        if score == rows[step - 1][call]:
            step -= 1
        elif score == rows[step][call - 1]:
            call -= 1
        else:  # only pairing step - 1 with call - 1 reaches this score
            pairs[step - 1] = call - 1
            step -= 1
            call -= 1
    return dict(sorted(pairs.items()))


def any_order(
    candidates: Sequence[Sequence[int]], required: Sequence[bool], calls: int
) -> dict[int, int]:
    """The best pairing in any order: step -> call.

    A maximum matching that also pairs the most required steps: augmenting paths
    from the required steps first, then from the optional ones. An augmenting
    path never unpairs a step it passes through, so the second phase keeps
    every required pair the first one found. O(steps x edges) at worst.
    """
    owner = [-1] * calls
    paired = [-1] * len(candidates)
    order = [s for s in range(len(candidates)) if required[s]]
    order += [s for s in range(len(candidates)) if not required[s]]
    for start in order:
        _augment(start, candidates, owner, paired)
    return {step: call for step, call in enumerate(paired) if call >= 0}


def _augment(
    start: int, candidates: Sequence[Sequence[int]], owner: list[int], paired: list[int]
) -> bool:
    """Pair ``start`` along a shortest augmenting path (breadth first), if one exists."""
    reached_from: dict[int, int] = {}
    queue = [start]
    for step in queue:  # the queue grows as the search goes
        for call in candidates[step]:
            if call in reached_from:
                continue
            reached_from[call] = step
            if owner[call] < 0:
                while True:  # flip the path back to start
                    step = reached_from[call]
                    previous = paired[step]
                    paired[step] = call
                    owner[call] = step
                    if step == start:
                        return True
                    call = previous
            queue.append(owner[call])
    return False
