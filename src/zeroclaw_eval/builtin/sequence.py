"""The ``tool_sequence`` family: the run's calls, step by step, in a stated mode.

An entry lists the expected steps, each a tool name (``*`` stands for any run
of characters) with optional argument expectations and an ``optional`` flag,
and a mode saying what else may happen:

==================== ================ =============================================
mode                 order            calls that pair with no step
==================== ================ =============================================
``in_order``         kept, gaps       allowed
``exact``            kept             none: every call, in order, nothing else
``unordered``        any              none: the same multiset of calls
``calls_include``    any              allowed: the calls include these
``calls_only_among`` any              none: the calls are only among these
==================== ================ =============================================

In every mode each required step pairs with a call of its own (one call never
serves two steps), and an optional step may pair or not; ``turn`` limits the
calls looked at to one turn (0-based). Arguments are compared as decoded JSON
(:mod:`zeroclaw_eval.util.jsonvalue`): ``exact`` (with ``ignore``, the JSON
pointers whose values do not matter), ``partial`` (recursive; arrays element by
element), ``subset`` (the call may omit keys the step has), ``ignore``, or
``paths`` (JSON pointers whose values must equal those of ``arguments``); any
expected value may be a matcher (:mod:`zeroclaw_eval.util.jsonmatch`:
``{"$regex": "^San"}``). The pairing is the best one
(:mod:`zeroclaw_eval.grading.alignment`), never a first fit, and a failure shows
it: which step took which call, which step found none and the nearest call with
its argument difference, which call no step accounts for.

In the ordered modes, steps that share a ``batch`` number are one *batch*: calls
the model asked for in one reply (:attr:`RecordedCall.response`), in any order
among them, every one after the steps before the batch and before the steps
after it. The pairing stays exact: a dynamic programme over the steps and the
calls in which a batch takes a whole reply.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field, NonNegativeInt

from zeroclaw_eval.grading.family import Family, NonEmptyStr, Params, Problem, ToolReference
from zeroclaw_eval.grading.record import RecordedCall, RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import Finding, Script
    from zeroclaw_eval.util.jsonmatch import Direction

Mode = Literal["in_order", "exact", "unordered", "calls_include", "calls_only_among"]
ArgumentMatch = Literal["exact", "partial", "subset", "ignore", "paths"]

DIRECTIONS: dict[str, Direction] = {"exact": "exact", "partial": "partial", "subset": "subset"}
"""The argument modes that compare whole objects, each its direction of comparison."""

ORDERED = frozenset({"in_order", "exact"})
"""Modes whose pairs keep the order of the steps."""

CLOSED = frozenset({"exact", "unordered", "calls_only_among"})
"""Modes in which every call must pair with a step."""

SHOWN_PAIRS = 8
"""How many pairs a detail lists before it counts the rest."""

SHOWN_PROBLEMS = 5
"""How many unpaired steps, and how many extra calls, a detail lists before it counts the rest."""


class CallPattern(Params):
    """A call as an entry describes it: a tool, and how its arguments must look.

    :class:`SequenceStep` extends it; so do the families that forbid calls
    (:mod:`zeroclaw_eval.builtin.forbidden`), which compare arguments the same way.
    """

    #: What ``match`` is when ``arguments`` are given and ``match`` is not.
    DEFAULT_MATCH: ClassVar[str] = "exact"

    tool: NonEmptyStr = Field(
        description="the tool's name; '*' stands for any run of characters (read_*)"
    )
    arguments: dict[str, Any] | None = Field(
        None,
        description="the expected arguments, compared as decoded JSON; a value may be a "
        'matcher: {"$regex": ...}, {"$contains": ...}, {"$icase": ...}, '
        '{"$approx": n, "$tol": t}, {"$one_of": [...]}, {"$type": ...}, {"$gt": n} '
        '($gte, $lt, $lte), {"$literal": value}',
    )
    match: ArgumentMatch | None = Field(
        None,
        description="how the arguments are compared: exact (the default with arguments), "
        "partial (the call may have more keys; recursive; arrays element by element), "
        "subset (the call may omit keys the step has), ignore (the default without), "
        "paths (only the values at the JSON pointers of paths)",
    )
    paths: Annotated[list[NonEmptyStr], Field(min_length=1)] | None = Field(
        None, description='with match "paths": JSON pointers (RFC 6901) into arguments'
    )
    ignore: Annotated[list[NonEmptyStr], Field(min_length=1)] | None = Field(
        None,
        description="with match exact: JSON pointers (RFC 6901) to keys of the call's "
        "arguments whose value, or absence, does not matter (a request id, a timestamp)",
    )

    @property
    def matching(self) -> str:
        """How the arguments are compared, the default filled in."""
        return self.match or ("ignore" if self.arguments is None else self.DEFAULT_MATCH)


class SequenceStep(CallPattern):
    """One expected call."""

    optional: bool = Field(
        False, description="the step may pair with no call (exact and calls_only_among)"
    )
    batch: NonNegativeInt | None = Field(
        None,
        description="steps with the same batch number (next to each other, in in_order "
        "or exact) pair with calls the model asked for in one reply, in any order among "
        "them; the batch keeps its place among the other steps",
    )


class SequenceEntry(Params):
    """Expected steps and the mode that says what else the calls may do."""

    mode: Mode = Field(
        description="in_order (gaps allowed), exact (every call, in order, nothing else), "
        "unordered (the same multiset of calls), calls_include (the calls include these), "
        "calls_only_among (the calls are only among these)"
    )
    steps: Annotated[list[SequenceStep], Field(min_length=1)]
    turn: NonNegativeInt | None = Field(
        None, description="only the calls of this turn (0-based); the whole case without it"
    )


def name_matcher(pattern: str) -> Callable[[str], bool]:
    """Whether a tool name fits ``pattern``, where ``*`` stands for any run of characters."""
    if "*" not in pattern:
        return lambda name: name == pattern
    regex = re.compile(".*".join(map(re.escape, pattern.split("*"))), re.DOTALL)
    return lambda name: regex.fullmatch(name) is not None


class ToolSequence(Family[list[SequenceEntry]]):
    """The calls follow the expected steps in the entry's mode."""

    name = "tool_sequence"

    def evidence(self, params: list[SequenceEntry]) -> frozenset[str]:
        # The arguments are read only by a step that compares them.
        compares = any(step.matching != "ignore" for entry in params for step in entry.steps)
        return frozenset({"calls", "arguments"} if compares else {"calls"})

    params = list[SequenceEntry]
    description = (
        "the calls follow the steps: in_order, exact, unordered, calls_include or "
        "calls_only_among, arguments compared as JSON, pairing optimal"
    )
    # An expected argument may be ""; names and paths are typed non-empty.
    allow_empty_strings = True

    def rules(self, params: list[SequenceEntry], expects: Mapping[str, Any]) -> Iterable[Problem]:
        for index, entry in enumerate(params):
            yield from _entry_problems(entry, expects, (index,))

    def turns_named(
        self, params: list[SequenceEntry]
    ) -> Iterable[tuple[tuple[str | int, ...], int]]:
        return [((index, "turn"), e.turn) for index, e in enumerate(params) if e.turn is not None]

    def tools_named(self, params: list[SequenceEntry]) -> Iterable[ToolReference]:
        for index, entry in enumerate(params):
            for number, step in enumerate(entry.steps):
                path = (index, "steps", number, "tool")
                yield ToolReference(path, step.tool, name_matcher(step.tool))

    def consistency(self, params: list[SequenceEntry], script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding

        for index, entry in enumerate(params):
            names = [c.name for c in script.calls if entry.turn is None or c.turn == entry.turn]
            scope = "" if entry.turn is None else f" in turn {entry.turn}"
            for number, step in enumerate(entry.steps):
                fits = name_matcher(step.tool)
                if not step.optional and not any(fits(name) for name in names):
                    yield Finding(
                        (index, "steps", number, "tool"),
                        f"the script never calls {step.tool!r}{scope}: this step can never "
                        "pair, so the entry can never pass",
                    )
            yield from _scripted_batches(entry, script, index)

    def grade(self, params: list[SequenceEntry], run: RunRecord) -> list[CheckResult]:
        return [_grade_entry(self.name, entry, run) for entry in params]


def _scripted_batches(entry: SequenceEntry, script: Script, index: int) -> Iterator[Finding]:
    """A batch whose tools no scripted reply asks for together can never pair."""
    from zeroclaw_eval.grading import alignment
    from zeroclaw_eval.grading.script import Finding

    replies: dict[int, list[str]] = {}
    for call in script.calls:
        if entry.turn is None or call.turn == entry.turn:
            replies.setdefault(call.reply, []).append(call.name)
    for block in batches(entry):
        if len(block) < 2:
            continue
        fits = [name_matcher(entry.steps[number].tool) for number in block]
        if not any(
            len(
                alignment.any_order(
                    [[p for p, name in enumerate(names) if fit(name)] for fit in fits],
                    [True] * len(fits),
                    len(names),
                )
            )
            == len(fits)
            for names in replies.values()
        ):
            tools = ", ".join(entry.steps[number].tool for number in block)
            yield Finding(
                (index, "steps", block[0], "batch"),
                f"no scripted reply asks for {tools} together: this batch can never pair, "
                "so the entry can never pass",
            )


# --- admission ------------------------------------------------------------------


def _entry_problems(
    entry: SequenceEntry, expects: Mapping[str, Any], at: tuple[str | int, ...]
) -> Iterator[Problem]:
    for number, step in enumerate(entry.steps):
        yield from pattern_problems(step, (*at, "steps", number))
    mode = entry.mode
    optional = [number for number, step in enumerate(entry.steps) if step.optional]
    if optional and mode in ("in_order", "calls_include"):
        yield Problem(
            (*at, "steps", optional[0], "optional"),
            f"has no effect: {mode} allows calls that pair with no step, so an optional "
            "step can never change the verdict",
        )
    if optional and mode == "unordered":
        yield Problem(
            (*at, "steps", optional[0], "optional"),
            "unordered means the same multiset of calls as the steps; for steps that may "
            "go unused, use calls_only_among",
        )
    yield from _batch_problems(entry, at)
    required = len(entry.steps) - len(optional)
    if required == 0:
        if mode != "calls_only_among":
            why = "a run that calls no tool passes; make at least one step required"
            yield Problem((*at, "steps"), f"every step is optional: {why}")
        elif not _has_floor(expects, entry):
            # Only among these is a restriction: it certifies something only when
            # something else makes a run that calls nothing fail.
            scope = "" if entry.turn is None else f" in turn {entry.turn}"
            yield Problem(
                (*at, "steps"),
                f"every step is optional: calls_only_among is then satisfied by a run that "
                f"calls no tool{scope}, and nothing else in the case needs a call{scope}; "
                "make a step required, or add a floor (min_tool_calls, exact_tool_calls, "
                "tools_used, a tool_call_counts min, a required step of another entry)",
            )
    if mode in CLOSED and entry.turn is None:
        yield from _needed_elsewhere(entry, expects, at)
    for bound in ("max_tool_calls", "exact_tool_calls"):
        if isinstance(expects.get(bound), int) and expects[bound] < required:
            yield Problem(
                (*at, "steps"),
                f"needs at least {plural(required, 'call')} (one per required step), "
                f"more than {bound}={expects[bound]} allows",
            )
    if entry.turn is None and mode in CLOSED:
        for bound in ("exact_tool_calls", "min_tool_calls"):
            if isinstance(expects.get(bound), int) and expects[bound] > len(entry.steps):
                yield Problem(
                    (*at, "steps"),
                    f"pairs at most {plural(len(entry.steps), 'call')} and {mode} allows no "
                    f"other call, fewer than {bound}={expects[bound]} demands",
                )
    # A pattern may still be met by a tool that is not banned; a plain name cannot.
    banned = set(expects.get("tools_not_used") or ())
    for number, step in enumerate(entry.steps):
        if not step.optional and step.tool in banned:
            yield Problem(
                (*at, "steps", number, "tool"), f"contradicts tools_not_used naming {step.tool!r}"
            )


def batches(entry: SequenceEntry) -> list[list[int]]:
    """The entry's steps in blocks, in order: a batch's steps together, any other
    step alone (admission has checked that a batch's steps are adjacent)."""
    blocks: list[list[int]] = []
    for number, step in enumerate(entry.steps):
        previous = entry.steps[number - 1].batch if number else None
        if step.batch is not None and blocks and step.batch == previous:
            blocks[-1].append(number)
        else:
            blocks.append([number])
    return blocks


def _batch_problems(entry: SequenceEntry, at: tuple[str | int, ...]) -> Iterator[Problem]:
    """A batch outside the ordered modes, of one step, split by other steps, or
    holding an optional step."""
    numbered = [(n, step) for n, step in enumerate(entry.steps) if step.batch is not None]
    if not numbered:
        return
    if entry.mode not in ORDERED:
        yield Problem(
            (*at, "steps", numbered[0][0], "batch"),
            f"batches are read in in_order and exact, which keep the order across them; "
            f"{entry.mode} pairs in any order",
        )
        return
    seen: dict[int, int] = {}
    for number, step in numbered:
        batch = step.batch
        assert batch is not None
        if batch in seen and entry.steps[number - 1].batch != batch:
            yield Problem(
                (*at, "steps", number, "batch"),
                f"batch {batch} is split: its steps must be next to each other "
                f"(it began at step {seen[batch]})",
            )
        seen.setdefault(batch, number)
        if step.optional:
            yield Problem(
                (*at, "steps", number, "optional"),
                "a batch's steps are asked for together: a step of one cannot be optional",
            )
    for batch, first in seen.items():
        if sum(1 for _, step in numbered if step.batch == batch) == 1:
            yield Problem(
                (*at, "steps", first, "batch"),
                f"batch {batch} has one step: a batch groups two or more calls of one reply",
            )


def _has_floor(expects: Mapping[str, Any], entry: SequenceEntry) -> bool:
    """Whether something else in the case makes a run with no call (in the entry's
    turn) fail: a required step of another entry in that scope, or, for the whole
    case, a bound or a tool some entry needs called."""
    if any(
        other.turn == entry.turn and not all(step.optional for step in other.steps)
        for other in expects.get(ToolSequence.name, ())
    ):
        return True
    if entry.turn is not None:
        return False  # a call in another turn leaves this one empty
    from zeroclaw_eval.builtin.tools import EXACT, needed_tools, required_calls

    counts = expects.get("tool_call_counts") or {}
    return bool(
        required_calls(expects)
        or expects.get(EXACT)
        or needed_tools(expects)
        or any(bounds.min for bounds in counts.values())
    )


def _needed_elsewhere(
    entry: SequenceEntry, expects: Mapping[str, Any], at: tuple[str | int, ...]
) -> Iterator[Problem]:
    """A tool another entry needs called that no step accepts, in a mode that
    allows no other call: the two can never pass together."""
    from zeroclaw_eval.builtin.tools import needed_tools

    fits = [name_matcher(step.tool) for step in entry.steps]
    for tool, family in needed_tools(expects):
        if not any(accepts(tool) for accepts in fits):
            yield Problem(
                (*at, "steps"),
                f"no step accepts {tool!r}, which {family} needs called, and {entry.mode} "
                "allows no other call",
            )
            return


def pattern_problems(step: CallPattern, at: tuple[str | int, ...]) -> Iterator[Problem]:
    """What admission refuses in a call pattern: malformed matchers, ``match``,
    ``arguments``, ``paths`` and ``ignore`` that do not go together, pointers that
    do not parse or can never matter. ``at`` is the pattern's path in the entry."""
    from zeroclaw_eval.util.jsonmatch import PatternError, compile_pattern, ignoring
    from zeroclaw_eval.util.jsonvalue import MISSING, parse_pointer, resolve

    expected = None
    try:
        expected = compile_pattern(step.arguments, (*at, "arguments"))
    except PatternError as exc:
        yield Problem(exc.at, exc.message)
        return
    if step.match == "ignore" and step.arguments is not None:
        yield Problem(
            (*at, "match"),
            "ignores the arguments given beside it: drop them, or say how to compare "
            "them (exact, partial, paths)",
        )
    if step.match in ("exact", "partial", "subset", "paths") and step.arguments is None:
        yield Problem((*at, "match"), f"{step.match!r} needs the expected arguments")
    if step.paths is not None and step.match != "paths":
        yield Problem((*at, "paths"), 'paths apply only with match "paths"')
    if step.match == "paths" and step.paths is None:
        yield Problem(
            (*at, "match"), "'paths' needs paths: the JSON pointers whose values must match"
        )
    for number, pointer in enumerate(step.paths or ()):
        try:
            tokens = parse_pointer(pointer)
        except ValueError as exc:
            yield Problem((*at, "paths", number), str(exc))
            continue
        if step.arguments is not None and resolve(expected, tokens) is MISSING:
            yield Problem((*at, "paths", number), "points at nothing in the step's arguments")
    if step.ignore is not None and step.matching != "exact":
        why = {
            "partial": "partial already ignores every key the step does not name",
            "subset": "subset already allows a call without any key the step names",
            "paths": "paths already compares only the values at its pointers",
        }.get(step.matching, "they apply only to arguments compared exactly")
        yield Problem((*at, "ignore"), f"has no effect: {why}")
        return
    for number, pointer in enumerate(step.ignore or ()):
        try:
            expected = ignoring(expected, parse_pointer(pointer))
        except (ValueError, PatternError) as exc:
            yield Problem((*at, "ignore", number), str(exc))


# --- grading --------------------------------------------------------------------


def _grade_entry(family: str, entry: SequenceEntry, run: RunRecord) -> CheckResult:
    from zeroclaw_eval.grading import alignment

    calls = [c for c in run.calls if entry.turn is None or c.turn == entry.turn]
    finder = Candidates(calls)
    candidates = [finder.of(step) for step in entry.steps]
    required = [not step.optional for step in entry.steps]
    blocks = batches(entry) if entry.mode in ORDERED else []
    if blocks and len(blocks) < len(entry.steps):  # some steps are batched
        pairs = in_order_batched(blocks, candidates, required, calls)
    else:
        pair = alignment.in_order if entry.mode in ORDERED else alignment.any_order
        pairs = pair(candidates, required, len(calls))
    missing = [n for n, needed in enumerate(required) if needed and n not in pairs]
    taken = set(pairs.values())
    extra = [p for p in range(len(calls)) if p not in taken] if entry.mode in CLOSED else []
    check = f"{family}: {_entry_label(entry)}"
    view = _View(entry, calls, run, pairs)
    score = trajectory_score(entry, candidates, len(calls))
    if not missing and not extra:
        return CheckResult(check, True, view.alignment(), score)
    problems = view.unpaired(missing[:SHOWN_PROBLEMS])
    if len(missing) > SHOWN_PROBLEMS:
        problems.append(f"... and {len(missing) - SHOWN_PROBLEMS} more steps with no call")
    problems += [
        f"extra call {view.label(p)} pairs with no step ({entry.mode} allows no other call)"
        for p in extra[:SHOWN_PROBLEMS]
    ]
    if len(extra) > SHOWN_PROBLEMS:
        problems.append(f"... and {len(extra) - SHOWN_PROBLEMS} more extra calls")
    return CheckResult(check, False, "; ".join([*problems, view.alignment()]), score)


def trajectory_score(
    entry: SequenceEntry, candidates: Sequence[Sequence[int]], calls: int
) -> float:
    """How close the calls came to the steps, from 0 to 1, whatever the verdict: the
    F1 of the steps and the calls that pair, the most pairs the mode's order allows
    (the longest common subsequence in the ordered modes, a largest matching in the
    others), every step counted, optional or not. 1 when there is neither a step nor
    a call; never read by the verdict."""
    from zeroclaw_eval.grading import alignment

    pair = alignment.in_order if entry.mode in ORDERED else alignment.any_order
    paired = len(pair(candidates, [False] * len(candidates), calls))
    total = len(candidates) + calls
    return round(2 * paired / total, 4) if total else 1.0


def calls_by_reply(calls: Sequence[RecordedCall]) -> dict[int | None, list[int]]:
    """The positions of ``calls`` grouped by the reply that asked for them, in order;
    ``None`` holds the calls no reply asked for."""
    replies: dict[int | None, list[int]] = {}
    for position, call in enumerate(calls):
        replies.setdefault(call.response, []).append(position)
    return replies


def in_order_batched(
    blocks: Sequence[Sequence[int]],
    candidates: Sequence[Sequence[int]],
    required: Sequence[bool],
    calls: Sequence[RecordedCall],
) -> dict[int, int]:
    """The best ordered pairing (step -> call) when some steps are batched.

    ``blocks`` are the steps in order, a batch's steps in one block. A block of
    one step pairs with one call after the calls the blocks before it took; a
    batch takes a whole reply (the calls with one ``response``) whose calls all
    come after them, its steps paired with calls of that reply in any order, all
    of them or none. As :func:`~zeroclaw_eval.grading.alignment.in_order`, the
    best pairing pairs the most required steps, then the most steps.
    """
    from zeroclaw_eval.grading import alignment

    count = len(calls)
    heavy = len(candidates) + 2
    # A reply is taken whole: it ends a prefix of the calls at its last call; calls
    # no reply asked for are in no batch.
    ending: dict[int, list[tuple[int, list[int]]]] = {}
    for reply, positions in calls_by_reply(calls).items():
        if reply is not None:
            ending.setdefault(positions[-1] + 1, []).append((positions[0], positions))
    rows = [[0] * (count + 1)]
    moves: list[list[Any]] = []
    for block in blocks:
        previous = rows[-1]
        row = [0] * (count + 1)
        move: list[Any] = [None] * (count + 1)
        fits = [set(candidates[step]) for step in block]
        for end in range(count + 1):
            how: Any = None  # the block pairs with nothing here
            best = previous[end]
            if end and row[end - 1] > best:
                best, how = row[end - 1], "gap"
            if len(block) == 1:
                step = block[0]
                if end and end - 1 in fits[0]:
                    gained = previous[end - 1] + (heavy if required[step] else 1)
                    if gained > best:
                        best, how = gained, {step: end - 1}
            else:
                for start, positions in ending.get(end, ()):
                    inside = [[p for p in positions if p in fit] for fit in fits]
                    matched = alignment.any_order(inside, [True] * len(block), count)
                    gained = previous[start] + heavy * len(block)
                    if len(matched) == len(block) and gained > best:
                        best = gained
                        how = (start, {block[s]: call for s, call in matched.items()})
            row[end], move[end] = best, how
        rows.append(row)
        moves.append(move)
    pairs: dict[int, int] = {}
    remaining, end = len(blocks), count
    while remaining and end >= 0:
        taken = moves[remaining - 1][end]
        if taken == "gap":
            end -= 1
            continue
        if isinstance(taken, tuple):
            end = taken[0]
            pairs.update(taken[1])
        elif isinstance(taken, dict):
            pairs.update(taken)
            end -= 1
        remaining -= 1
    return dict(sorted(pairs.items()))


class Candidates:
    """The calls each step could pair with: its name fits, its arguments match.

    Comparing every step with every call would cost steps x calls argument
    comparisons. A step that expects arguments needs, at least, one of its
    scalars at the same place in the call, so the calls are indexed by the value
    at that place (once per place, shared by the steps that use it) and only the
    calls found there are compared in full.
    """

    #: Below this many calls of a fitting name, comparing them all is cheaper than an index.
    INDEX_FROM = 16

    def __init__(self, calls: Sequence[RecordedCall]) -> None:
        self.calls = calls
        self.by_name: dict[str, list[int]] = {}
        for position, call in enumerate(calls):
            self.by_name.setdefault(call.name, []).append(position)
        self.indexes: dict[Any, dict[Any, list[int]]] = {}

    def of(self, step: CallPattern) -> list[int]:
        """The positions of the calls that fit the step by name and by arguments."""
        accepts = name_matcher(step.tool)
        fitting = [self.by_name[name] for name in self.by_name if accepts(name)]
        named = fitting[0] if len(fitting) == 1 else sorted(p for ps in fitting for p in ps)
        # Only a step some call fits by name reads its arguments: admission grades
        # the empty run before it reports a malformed pointer, which must not raise.
        if not named or step.matching == "ignore":
            return named
        expected = expected_arguments(step)
        test = argument_test(step, expected)
        if len(named) >= self.INDEX_FROM:
            named = self._narrowed(step, expected, named)
        return [p for p in named if test(self.calls[p].arguments)]

    def _narrowed(self, step: CallPattern, expected: Any, named: list[int]) -> list[int]:
        from zeroclaw_eval.util import jsonvalue

        anchor = _anchor(step, expected)
        if anchor is None:
            return named
        place, read, wanted = anchor
        index = self.indexes.get(place)
        if index is None:
            index = self.indexes[place] = {}
            for position, call in enumerate(self.calls):
                key = jsonvalue.scalar_key(read(call.arguments))
                if key is not None:
                    index.setdefault(key, []).append(position)
        fits = set(named)
        return [p for p in index.get(wanted, ()) if p in fits]


def _anchor(step: CallPattern, expected: Any) -> tuple[Any, Callable[[Any], Any], Any] | None:
    """One scalar the step's arguments require, as (place, how to read it, its key)."""
    from zeroclaw_eval.util import jsonmatch, jsonvalue

    if step.matching == "paths":
        for pointer in step.paths or ():
            tokens = jsonvalue.parse_pointer(pointer)
            value = jsonvalue.resolve(expected, tokens)
            key = None if type(value) is jsonmatch.Matcher else jsonvalue.scalar_key(value)
            if key is not None:
                return (("pointer", tokens), partial(jsonvalue.resolve, tokens=tokens), key)
        return None
    if step.matching == "subset":  # a call may leave out any key the step has
        return None
    for path, value in jsonmatch.literal_leaves(expected):
        return (("path", path), partial(jsonvalue.follow, path=path), jsonvalue.scalar_key(value))
    return None


def expected_arguments(step: CallPattern) -> Any:
    """The step's arguments as a :mod:`~zeroclaw_eval.util.jsonmatch` pattern: its
    matchers compiled, its ``ignore`` pointers in place (admission has checked both)."""
    from zeroclaw_eval.util import jsonmatch, jsonvalue

    expected = step.arguments
    if expected is None or not (step.ignore or jsonmatch.has_matchers(expected)):
        return expected  # plain JSON: the fast comparisons of jsonvalue apply
    expected = jsonmatch.compile_pattern(expected)
    for pointer in step.ignore or ():
        expected = jsonmatch.ignoring(expected, jsonvalue.parse_pointer(pointer))
    return expected


def argument_test(step: CallPattern, expected: Any) -> Callable[[dict[str, Any]], bool]:
    """Whether a call's arguments meet the step (``ignore``: always); ``expected``
    is :func:`expected_arguments` of the step."""
    from zeroclaw_eval.util import jsonmatch, jsonvalue

    matching = step.matching
    plain = expected is step.arguments  # no matcher, nothing ignored
    if matching == "paths":
        wanted = [
            (tokens, jsonvalue.resolve(expected, tokens))
            for tokens in map(jsonvalue.parse_pointer, step.paths or ())
        ]
        return lambda arguments: all(
            jsonmatch.matches(value, jsonvalue.resolve(arguments, tokens), "exact")
            for tokens, value in wanted
        )
    if matching == "exact" and plain:
        return lambda arguments: jsonvalue.equal(expected, arguments)
    if matching == "partial" and plain:
        return lambda arguments: jsonvalue.contains(expected, arguments)
    if matching in DIRECTIONS:
        return partial(jsonmatch.matches, expected, direction=DIRECTIONS[matching])
    return lambda arguments: True


def argument_differences(step: CallPattern, arguments: dict[str, Any]) -> list[str]:
    """Where a call's arguments depart from the step's, each with its pointer and
    both values (none for ``ignore``)."""
    from zeroclaw_eval.util import jsonmatch, jsonvalue

    matching = step.matching
    expected = expected_arguments(step)
    if matching in DIRECTIONS:
        return list(jsonmatch.differences(expected, arguments, DIRECTIONS[matching]))
    found = []
    if matching == "paths":
        for pointer in step.paths or ():
            tokens = jsonvalue.parse_pointer(pointer)
            value = jsonvalue.resolve(expected, tokens)
            got = jsonvalue.resolve(arguments, tokens)
            if not jsonmatch.matches(value, got, "exact"):
                found.append(
                    f"{pointer}: expected {jsonmatch.show_pattern(value)}, "
                    f"got {jsonvalue.show(got)}"
                )
    return found


def _entry_label(entry: SequenceEntry) -> str:
    names = [step.tool + ("?" if step.optional else "") for step in entry.steps]
    if any(step.batch is not None for step in entry.steps):
        names = [
            names[block[0]] if len(block) == 1 else f"[{', '.join(names[n] for n in block)}]"
            for block in batches(entry)
        ]
    if len(names) > 6:
        names = [*names[:5], f"... ({len(names)} steps)"]
    scope = "" if entry.turn is None else f" in turn {entry.turn}"
    # An arrow reads as an order: only the ordered modes check one.
    joiner = " -> " if entry.mode in ORDERED else ", "
    return f"{entry.mode} {joiner.join(names)}{scope}"


def call_labels(calls: Sequence[RecordedCall], run: RunRecord) -> dict[int, str]:
    """Each of ``calls`` (some of the run's) by its position, as a detail names it:
    ``echo[1] (turn 0, call 3)``, the tool's own index, as ``call_index`` counts
    it, then the turn and the place in dispatch order."""
    labels: dict[int, str] = {}
    per_tool: dict[str, int] = {}
    where = {id(call): number for number, call in enumerate(calls)}
    for number, call in enumerate(run.calls):
        index = per_tool.get(call.name, 0)
        per_tool[call.name] = index + 1
        if id(call) in where:
            labels[where[id(call)]] = f"{call.name}[{index}] (turn {call.turn}, call {number})"
    return labels


class _View:
    """How a detail names steps, calls and the pairing, made only for the detail."""

    def __init__(
        self,
        entry: SequenceEntry,
        calls: Sequence[RecordedCall],
        run: RunRecord,
        pairs: Mapping[int, int],
    ) -> None:
        self.entry = entry
        self.calls = calls
        self.run = run
        self.pairs = pairs
        self._labels: dict[int, str] | None = None

    def label(self, position: int) -> str:
        """How a detail names the call at ``position`` (:func:`call_labels`)."""
        if self._labels is None:
            self._labels = call_labels(self.calls, self.run)
        return self._labels[position]

    def alignment(self) -> str:
        """The pairs, step by step: ``step 0 echo -> echo[0] (turn 0, call 0)``."""
        if not self.pairs:
            return f"no step paired; {self.observed()}"
        shown = [
            f"step {step} {self.entry.steps[step].tool} -> {self.label(call)}"
            for step, call in list(self.pairs.items())[:SHOWN_PAIRS]
        ]
        more = len(self.pairs) - len(shown)
        if more:
            shown.append(f"... and {more} more")
        return f"paired: {', '.join(shown)}"

    def observed(self) -> str:
        scope = "" if self.entry.turn is None else f" in turn {self.entry.turn}"
        if not self.calls:
            return f"no call{scope}"
        names = ", ".join(call.name for call in self.calls[:20])
        if len(self.calls) > 20:
            names += ", ..."
        return f"{plural(len(self.calls), 'call')}{scope}: {names}"

    def unpaired(self, numbers: Sequence[int]) -> list[str]:
        """What each unpaired required step met: a batch's steps said once, together."""
        said: set[int] = set()
        problems = []
        for number in numbers:
            batch = self.entry.steps[number].batch
            if batch is None:
                problems.append(self.unpaired_step(number))
            elif batch not in said:
                said.add(batch)
                problems.append(self.unpaired_batch(batch))
        return problems

    def unpaired_batch(self, batch: int) -> str:
        """A batch that found no reply: its tools, and the replies there were."""
        steps = [n for n, step in enumerate(self.entry.steps) if step.batch == batch]
        tools = ", ".join(self.entry.steps[n].tool for n in steps)
        head = (
            f"batch {batch} (steps {steps[0]}-{steps[-1]}: {tools}): no reply asked for "
            "all of them after the calls the steps before took"
        )
        if not self.calls:
            return f"{head} ({self.observed()})"
        replies = calls_by_reply(self.calls)
        shown = [
            f"{'reply ?' if reply is None else f'reply {reply}'}: "
            + ", ".join(self.calls[p].name for p in held)
            for reply, held in list(replies.items())[:SHOWN_PROBLEMS]
        ]
        if len(replies) > SHOWN_PROBLEMS:
            shown.append("...")
        return f"{head} (calls by reply: {'; '.join(shown)}{self._batch_miss(steps, replies)})"

    def _batch_miss(self, steps: Sequence[int], replies: Mapping[int | None, list[int]]) -> str:
        """Where a reply that asks for every tool of the batch departs from its
        arguments: the first step no call of that reply matches, its nearest call
        there, the pointer and the two values. Empty when no reply asks for them all."""
        for reply, held in replies.items():
            if reply is None:
                continue  # calls no reply asked for fill no batch
            named = {
                number: [
                    p
                    for p in held
                    if name_matcher(self.entry.steps[number].tool)(self.calls[p].name)
                ]
                for number in steps
            }
            if not all(named.values()):
                continue
            for number in steps:
                step = self.entry.steps[number]
                differences = {
                    p: argument_differences(step, self.calls[p].arguments) for p in named[number]
                }
                nearest = min(named[number], key=lambda p: (len(differences[p]), p))
                if differences[nearest]:
                    listed = "; ".join(differences[nearest][:3])
                    return (
                        f"; nearest: reply {reply}, step {number} {step.tool} and "
                        f"{self.label(nearest)}, arguments differ: {listed}"
                    )
        return ""

    def unpaired_step(self, number: int) -> str:
        """What an unpaired required step met: the nearest call and how it differs."""
        step = self.entry.steps[number]
        head = f"step {number} {step.tool}: no call paired"
        accepts = name_matcher(step.tool)
        named = [p for p, call in enumerate(self.calls) if accepts(call.name)]
        if not named:
            return f"{head} (no call to {step.tool}; {self.observed()})"
        owner = {call: s for s, call in self.pairs.items()}
        differences = {p: argument_differences(step, self.calls[p].arguments) for p in named}
        nearest = min(named, key=lambda p: (len(differences[p]), p in owner, p))
        found = differences[nearest]
        if found:
            listed = "; ".join(found[:3]) + ("; ..." if len(found) > 3 else "")
            return f"{head} (nearest: {self.label(nearest)}, arguments differ: {listed})"
        if nearest in owner:
            why = f"it pairs with step {owner[nearest]}"
        else:
            why = "it is out of order with the steps paired around it"
        return f"{head} ({self.label(nearest)} matches, but {why})"


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    register(ToolSequence())
