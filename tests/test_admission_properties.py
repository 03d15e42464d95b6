"""Property tests of admission: every mutant of a valid fixture is a valid case or refused.

The mutants start from every versioned fixture and drop, rename and duplicate
keys, swap types, empty strings, put in huge, negative and non-finite numbers,
nest deeply, then maybe truncate the text, splice in random bytes or re-encode
it. The invariant: admission either returns a case that can be run and graded,
or raises an :class:`AdmissionError` whose message is one line naming the file.
No other exception, no traceback, no hang; and through the CLI a suite holding a
refused mutant never exits 0 and still prints its JSON document.
"""

from __future__ import annotations

import copy
import faulthandler
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from zeroclaw_eval import AdmissionError, Case, EvalConfig, Registry, RunMode, admit_file, run_case
from zeroclaw_eval.grading.record import empty_run
from zeroclaw_eval.report.model import CaseReport

from .cli_process import json_report
from .conftest import PROJECT, TESTS, zeroclaw

BASES: list[Any] = [
    json.loads(path.read_text(encoding="utf-8"))
    for path in sorted(
        [*(PROJECT / "evals" / "regression").glob("*.json"), *TESTS.glob("conformance/*/*.json")]
    )
]

#: A hang in admission or in a run kills the test process with every thread's
#: stack (even one stuck in C code) instead of stalling CI until its time limit.
HANG_S = 60


@contextmanager
def no_hang() -> Iterator[None]:
    faulthandler.dump_traceback_later(HANG_S, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


# --- building mutants ---------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """A literal emitted as is: ``NaN``, ``1e999``, a 5000-digit integer..."""

    text: str


@dataclass(frozen=True)
class Pairs:
    """An object written from a list of pairs, so a key can appear twice."""

    items: tuple[tuple[str, Any], ...]


def emit(value: Any) -> str:
    """JSON text for a tree that may hold :class:`Raw` and :class:`Pairs`."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {emit(v)}" for k, v in value.items) + "}"
    if isinstance(value, dict):
        return emit(Pairs(tuple(value.items())))
    if isinstance(value, list):
        return "[" + ", ".join(emit(item) for item in value) + "]"
    return json.dumps(value)  # ASCII: lone surrogates become \ud800 escapes


def locations(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from locations(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from locations(child, (*path, index))


def get(tree: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        tree = tree[part]
    return tree


KNOWN_KEYS = [
    "model_name",
    "turns",
    "expects",
    "user_input",
    "steps",
    "response",
    "type",
    "content",
    "tool_calls",
    "id",
    "name",
    "arguments",
    "input_tokens",
    "output_tokens",
    "response_contains",
    "response_not_contains",
    "response_matches",
    "tools_used",
    "tools_not_used",
    "max_tool_calls",
    "min_tool_calls",
    "exact_tool_calls",
    "all_tools_succeeded",
    "tool_arguments_contain",
    "tool_results_contain",
    "tool",
    "needle",
    "call_index",
]

tricky_text = st.one_of(
    st.sampled_from(["", " ", "\n", "a\nb", "\u2028", "\x1b[31m", "\ud800", "é", "echo"]),
    st.text(st.characters(), max_size=20),
)
key_text = st.one_of(st.sampled_from(KNOWN_KEYS), tricky_text)
numbers = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [Raw(t) for t in ("NaN", "Infinity", "-Infinity", "1e999", "-0", "1.0", "1" + "0" * 5000)]
    ),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, tricky_text)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(key_text, inner, max_size=3)
    ),
    max_leaves=8,
)


def deep(depth: int, kind: str, leaf: Any) -> Raw:
    """``leaf`` inside ``depth`` arrays or objects (as text: deeper than Python recursion)."""
    opening, closing = ("[", "]") if kind == "list" else ('{"k": ', "}")
    return Raw(opening * depth + emit(leaf) + closing * depth)


@st.composite
def mutate(draw: st.DrawFn, tree: Any) -> Any:
    """One structural mutation of ``tree`` (a fresh copy), at a random place."""
    tree = copy.deepcopy(tree)
    path = draw(st.sampled_from(list(locations(tree))))
    kind = draw(
        st.sampled_from(["drop", "rename", "duplicate", "replace", "empty", "number", "nest"])
    )
    value = get(tree, path)
    if not path:  # the root itself
        if kind in ("replace", "number"):
            return draw(json_values)
        if kind == "nest":
            return deep(draw(st.integers(1, 3000)), draw(st.sampled_from(["list", "dict"])), tree)
        return tree
    parent, last = get(tree, path[:-1]), path[-1]
    if isinstance(parent, Pairs):  # already duplicated: leave it
        return tree
    if kind == "drop":
        del parent[last]
    elif kind == "rename" and isinstance(parent, dict):
        parent[draw(key_text)] = parent.pop(last)
    elif kind == "duplicate" and isinstance(parent, dict):
        items = tuple(parent.items())
        again = (last, draw(st.one_of(st.just(value), json_values)))
        replaced = Pairs((*items, again))
        if len(path) == 1:
            return replaced
        get(tree, path[:-2])[path[-2]] = replaced
    elif kind == "replace":
        parent[last] = draw(json_values)
    elif kind == "empty":
        parent[last] = {str: "", list: [], dict: {}}.get(type(value), "")
    elif kind == "number":
        parent[last] = draw(numbers)
    elif kind == "nest":
        depth = draw(st.integers(1, 3000))
        parent[last] = deep(depth, draw(st.sampled_from(["list", "dict"])), value)
    return tree


@st.composite
def mutants(draw: st.DrawFn) -> bytes:
    """Bytes of a mutated fixture: structural mutations, then maybe byte-level ones."""
    tree = draw(st.sampled_from(BASES))
    for _ in range(draw(st.integers(0, 3))):
        tree = draw(mutate(tree))
    data = emit(tree).encode("utf-8")
    damage = draw(
        st.sampled_from(["none"] * 6 + ["truncate", "splice", "utf-16", "bom", "latin-1", "noise"])
    )
    if damage == "truncate":
        data = data[: draw(st.integers(0, max(len(data) - 1, 0)))]
    elif damage == "splice":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    elif damage == "utf-16":
        data = data.decode("utf-8").encode("utf-16")
    elif damage == "bom":
        data = b"\xef\xbb\xbf" + data
    elif damage == "latin-1":
        data = data.decode("utf-8").encode("latin-1", "replace")
    elif damage == "noise":
        data = draw(st.binary(max_size=64))
    return data


# --- the invariant -------------------------------------------------------------------


def assert_valid_case(case: Case, registry: Registry) -> None:
    """What every admitted case guarantees before it may run."""
    assert isinstance(case, Case)
    assert case.name
    assert case.trace.turns and all(turn.steps for turn in case.trace.turns)
    assert case.expectations
    assert all(registry.family(e.name) is not None for e in case.expectations)
    assert case.grade(empty_run())  # it produces at least one check


def assert_refusal(error: AdmissionError, path: Path) -> None:
    message = str(error)
    assert len(message.splitlines()) == 1, message
    assert message.startswith(f"{path}: "), message


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=mutants())
def test_every_mutant_is_admitted_whole_or_refused_in_one_line(
    data: bytes, registry: Registry, replay: RunMode
) -> None:
    with tempfile.TemporaryDirectory() as tmp, no_hang():
        path = Path(tmp) / "mutant.json"
        path.write_bytes(data)
        try:
            case = admit_file(path, registry, replay)
        except AdmissionError as error:
            assert_refusal(error, path)
            event(f"refused: {error.field.split('.')[0].split('[')[0] or '(whole file)'}")
            return
        event("admitted")
        assert_valid_case(case, registry)
        # An admitted mutant runs and grades without crashing the runner; whatever
        # it does, a case with a run error or a failed check never passes.
        report = run_case(case, replay, registry, EvalConfig())
        assert isinstance(report, CaseReport)
        if report.error is not None:
            assert not report.passed
        else:
            assert report.checks
            assert report.passed == all(check.passed for check in report.checks)


VALID = json.dumps(BASES[0])


@settings(max_examples=4, suppress_health_check=[HealthCheck.too_slow])
@given(data=mutants())
def test_a_suite_holding_a_refused_mutant_never_exits_0_and_keeps_its_json(
    data: bytes, registry: Registry, replay: RunMode
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp)
        (suite / "a_valid.json").write_text(VALID, encoding="utf-8")
        mutant = suite / "b_mutant.json"
        mutant.write_bytes(data)
        try:
            admit_file(mutant, registry, replay)
        except AdmissionError:
            pass
        else:
            assume(False)  # only refused mutants are run through the CLI
        result = zeroclaw("eval", "run", "--suite", suite, "--format", "json")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    document = json_report(result)
    assert document["all_passed"] is False
    assert document["cases"] == []
    assert any(line.startswith(f"{mutant}: ") for line in document["errors"])
    stderr = result.stderr.splitlines()
    assert any(line.startswith(f"Error: {mutant}: ") for line in stderr), stderr
