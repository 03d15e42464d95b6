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
from itertools import accumulate, repeat
from operator import add


def in_order(
    candidates: Sequence[Sequence[int]], required: Sequence[bool], calls: int
) -> dict[int, int]:
    """The best pairing whose calls come in the order of their steps: step -> call.

    ``candidates[i]`` holds the calls (``0 <= call < calls``) step ``i`` could
    pair with; ``required[i]`` says whether it must pair. Time and memory
    O(steps x calls that some step could take), each row a C-speed running maximum.
    """
    steps = len(candidates)
    # Only calls some step could take can be paired: the programme runs over
    # them alone (their order kept), often a fraction of the run.
    columns = sorted(set().union(*candidates))
    column_of = {call: column for column, call in enumerate(columns)}
    width = len(columns)
    # Weights make the order of preference lexicographic: one more required
    # pair outweighs any number of optional ones (there are fewer than steps + 1).
    heavy = steps + 2
    rows = [[0] * (width + 1)]
    for step in range(steps):
        previous = rows[-1]
        weight = heavy if required[step] else 1
        fits = candidates[step]
        if len(fits) == width:  # a step that can take any of them: the row at C speed
            row = [0, *map(max, previous[1:], map(add, previous, repeat(weight)))]
        else:
            row = previous[:]
            for call in fits:
                column = column_of[call]
                gained = previous[column] + weight
                if gained > row[column + 1]:
                    row[column + 1] = gained
        rows.append(list(accumulate(row, max)))
    pairs: dict[int, int] = {}
    step, column = steps, width
    while step and column:
        score = rows[step][column]
        # On a tie, leave the later step unpaired: a detail then reads from the
        # first step that went wrong.
        if score == rows[step - 1][column]:
            step -= 1
        elif score == rows[step][column - 1]:
            column -= 1
        else:  # only pairing step - 1 with this column's call reaches this score
            pairs[step - 1] = columns[column - 1]
            step -= 1
            column -= 1
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
