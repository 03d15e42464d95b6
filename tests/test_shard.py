"""``--shard K/N``: the pure slicing function, and shards run as separate real processes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zeroclaw_eval.builtin.text import TextFormatter
from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport
from zeroclaw_eval.selection.shard import ShardSpec, shard
from zeroclaw_eval.testing import fixture, write_fixture

from .cli_process import json_report
from .conftest import zeroclaw, zeroclaw_all


@dataclass(frozen=True)
class Item:
    name: str
    source: str


def items(count: int) -> list[Item]:
    return [Item(f"case-{i:02}", f"suite/c{i:02}.json") for i in range(count)]


@given(
    st.lists(st.text(min_size=1, max_size=8), max_size=40),
    st.integers(min_value=1, max_value=9),
)
def test_every_case_lands_in_exactly_one_shard_and_counts_differ_by_at_most_one(
    names: list[str], count: int
) -> None:
    cases = [Item(name, f"s/{i}-{name}.json") for i, name in enumerate(names)]
    slices = [shard(cases, k, count) for k in range(1, count + 1)]
    dealt = [id(case) for piece in slices for case in piece]
    assert sorted(dealt) == sorted(id(case) for case in cases)
    sizes = [len(piece) for piece in slices]
    assert max(sizes) - min(sizes) <= 1
    for piece in slices:  # each slice keeps the order it was given in
        assert piece == [case for case in cases if case in piece]


@given(
    st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=30),
    st.integers(min_value=1, max_value=6),
)
def test_with_durations_every_case_still_lands_in_exactly_one_shard(
    seconds: list[float], count: int
) -> None:
    cases = items(len(seconds))
    durations = {case.name: s for case, s in zip(cases, seconds, strict=True)}
    slices = [shard(cases, k, count, durations) for k in range(1, count + 1)]
    assert sorted(case.name for piece in slices for case in piece) == [c.name for c in cases]


def test_the_slice_does_not_depend_on_the_order_cases_are_given_in() -> None:
    cases = items(10)
    shuffled = cases[3:] + cases[:3]
    for k in (1, 2, 3):
        assert set(shard(cases, k, 3)) == set(shard(shuffled, k, 3))


def test_count_balanced_shards_are_contiguous_runs_of_the_path_order() -> None:
    # A fixed answer: the slicing is specified, so it is the same on every machine
    # and every Python (no hash(), no filesystem order).
    cases = items(10)
    assert [[c.name[-2:] for c in shard(cases, k, 3)] for k in (1, 2, 3)] == [
        ["00", "01", "02", "03"],
        ["04", "05", "06"],
        ["07", "08", "09"],
    ]


def test_durations_balance_the_work_longest_first() -> None:
    cases = items(6)
    durations = {"case-00": 10.0, "case-01": 9.0, "case-02": 1.0, "case-03": 1.0, "case-04": 1.0}
    # case-05 has no history: it weighs the mean of the others (4.4 s).
    slices = [shard(cases, k, 2, durations) for k in (1, 2)]
    assert [[c.name for c in piece] for piece in slices] == [
        ["case-00", "case-02", "case-03", "case-04"],  # 10 + 1 + 1 + 1
        ["case-01", "case-05"],  # 9 + 4.4
    ]
    # By count alone the two long cases share a shard: 20 s against 6.4 s.
    by_count = [sum(durations.get(c.name, 4.4) for c in shard(cases, k, 2)) for k in (1, 2)]
    assert by_count == [20.0, 6.4]


def test_equal_durations_are_dealt_in_name_order() -> None:
    cases = [Item(name, f"s/{name}.json") for name in ("d", "b", "a", "c")]
    durations = dict.fromkeys("abcd", 2.0)
    assert [c.name for c in shard(cases, 1, 2, durations)] == ["a", "c"]
    assert [c.name for c in shard(cases, 2, 2, durations)] == ["d", "b"]  # given order kept


def test_unusable_durations_are_ignored() -> None:
    cases = items(4)
    bad = {"case-00": float("nan"), "case-01": -1.0, "case-02": float("inf")}
    assert shard(cases, 1, 2, bad) == shard(cases, 1, 2)


@pytest.mark.parametrize(("index", "count"), [(0, 4), (5, 4), (1, 0), (-1, 2)])
def test_an_index_outside_the_shards_is_refused(index: int, count: int) -> None:
    with pytest.raises(ValueError, match="expected K/N"):
        shard(items(3), index, count)


@pytest.mark.parametrize("text", ["1/4", " 4/4 ", "1/1"])
def test_shard_spec_parses(text: str) -> None:
    spec = ShardSpec.parse(text)
    assert str(spec) == text.strip()


# --- through the real CLI ---------------------------------------------------------


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """Ten cases, two of them failing."""
    directory = tmp_path / "suite"
    for i in range(10):
        needle = "nope" if i in (3, 8) else "done"
        case = fixture({"response_contains": [needle]}, name=f"case-{i}")
        write_fixture(directory, case, f"c{i}.json")
    return tmp_path


def test_four_shards_as_processes_cover_the_suite_once_with_the_same_verdicts(
    suite: Path,
) -> None:
    runs = {
        f"{k}/4": (
            ["eval", "run", "--suite", "suite", "--shard", f"{k}/4", "--format", "json"],
            suite,
        )
        for k in range(1, 5)
    }
    runs["whole"] = (["eval", "run", "--suite", "suite", "--format", "json"], suite)
    done = zeroclaw_all(runs)
    whole = json_report(done.pop("whole"))
    assert (whole["shard"], whole["suite_total"]) == (None, 10)
    seen: dict[str, bool] = {}
    for key, process in done.items():
        document = json_report(process)
        k = int(key[0])
        assert document["shard"] == {"index": k, "count": 4}
        assert document["suite_total"] == 10
        assert document["config_digest"] == whole["config_digest"]
        assert document["suite"] == whole["suite"]
        assert len(document["cases"]) in (2, 3)
        expected_code = 0 if document["all_passed"] else 1
        assert process.returncode == expected_code
        for case in document["cases"]:
            assert case["name"] not in seen, "a case ran in two shards"
            seen[case["name"]] = case["passed"]
    assert seen == {case["name"]: case["passed"] for case in whole["cases"]}
    assert not seen["case-3"] and not seen["case-8"]


def test_the_slice_is_the_same_whatever_the_hash_seed(suite: Path) -> None:
    slices = []
    for seed in ("0", "1", "12345"):
        run = zeroclaw(
            "eval", "run", "--suite", "suite", "--shard", "2/3", "--format", "json",
            cwd=suite, env={"PYTHONHASHSEED": seed},
        )  # fmt: skip
        slices.append([case["source"] for case in json_report(run)["cases"]])
    assert slices[0] == slices[1] == slices[2]
    assert slices[0] == ["suite/c4.json", "suite/c5.json", "suite/c6.json"]


def test_text_report_says_which_shard_ran(suite: Path) -> None:
    run = zeroclaw("eval", "run", "--suite", "suite", "--shard", "1/4", cwd=suite)
    assert run.returncode == 0, run.stdout  # c0, c1, c2 (the failing c3 is in shard 2)
    assert run.stdout.endswith("3/3 cases passed (shard 1/4 of a suite of 10 cases)\n")


@pytest.mark.parametrize("spec", ["0/4", "5/4", "1/0", "2", "a/b", "1/4/2", "-1/4", ""])
def test_a_bad_shard_is_a_usage_error(suite: Path, spec: str) -> None:
    run = zeroclaw("eval", "run", "--suite", "suite", "--shard", spec, cwd=suite)
    assert run.returncode == 2
    assert "Invalid value for '--shard'" in run.stderr
    assert "expected K/N with 1 <= K <= N" in run.stderr
    assert "Traceback" not in run.stderr


def test_an_empty_shard_is_an_error_never_green(tmp_path: Path) -> None:
    write_fixture(tmp_path / "s", fixture({"response_contains": ["done"]}, name="only"))
    run = zeroclaw(
        "eval", "run", "--suite", "s", "--shard", "2/2", "--format", "json", cwd=tmp_path
    )
    assert run.returncode == 1
    document = json_report(run)
    assert document["all_passed"] is False
    assert document["shard"] == {"index": 2, "count": 2}
    assert "--shard 2/2: no case falls in this shard (1 case for 2 shards)" in run.stderr


def test_a_refused_fixture_fails_every_shard(suite: Path) -> None:
    (suite / "suite" / "c0.json").write_text(json.dumps({"model_name": "x"}), encoding="utf-8")
    for k in (1, 4):  # c0 falls in shard 1 only; shard 4 must be red as well
        run = zeroclaw("eval", "run", "--suite", "suite", "--shard", f"{k}/4", cwd=suite)
        assert run.returncode == 1
        assert "suite/c0.json: turns: required key is missing" in run.stderr


@pytest.mark.parametrize(
    ("total", "selected", "says"),
    [
        (8, 8, "(shard 1/4 of a suite of 8 cases)"),
        (1, 1, "(shard 1/4 of a suite of 1 case)"),
        (11, 5, "(shard 1/4 of 5 selected of a suite of 11 cases)"),
    ],
)
def test_the_shard_line_reads_for_every_suite_size(total: int, selected: int, says: str) -> None:
    passed = CaseReport("c", "suite/c.json", (CheckResult("tools_used: echo", True, ""),))
    report = SuiteReport(
        "suite", (passed,), shard=(1, 4), suite_total=total, selected_total=selected
    )
    assert TextFormatter().render(report).endswith(f"1/1 cases passed {says}\n")
