"""The shipped suite, after one recorded run, splits into shards of like expected time.

One case used to absorb the harness's warm-up (the regex worker starting, about
a tenth of a second) while every other case took under a millisecond, so the
recorded durations cut 24 cases into shards of 1, 12 and 11. Real subprocesses:
a recorded run, then each shard as CI would run it.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import CheckResult, Family, RunRecord, hookimpl
from zeroclaw_eval.history.store import open_history
from zeroclaw_eval.selection.shard import NOISE_FLOOR_S
from zeroclaw_eval.testing import fixture, run_cli, write_fixture
from zeroclaw_eval.util.warmup import setting_up

from .cli_process import json_report
from .conftest import PROJECT, zeroclaw

SUITE = PROJECT / "evals" / "regression"


@pytest.mark.parametrize("count", [2, 3, 4])
def test_the_shipped_suite_splits_evenly_after_a_recorded_run(tmp_path: Path, count: int) -> None:
    # The fault cases that script a wait (a Retry-After of a second, a slow reply) each
    # outweigh the rest of the suite: no cut of whole cases evens them out, and they
    # are not the harness's noise this test is about. The suite without them.
    suite = tmp_path / "regression"
    suite.mkdir()
    for source in SUITE.glob("*.json"):
        if not source.name.startswith("fault_"):
            (suite / source.name).write_bytes(source.read_bytes())
    history = tmp_path / "history.sqlite"
    recorded = zeroclaw("eval", "run", "--suite", suite, "--history", history, cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stderr
    with open_history(history) as opened:
        durations = opened.case_durations(str(suite.resolve()), "replay", 1)
    assert len(durations) >= 2 * count  # the recorded run is what the shards are cut by

    shards = []
    for index in range(1, count + 1):
        result = zeroclaw(
            "eval", "run", "--suite", suite, "--history", history,
            "--shard", f"{index}/{count}", "--format", "json", cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        shards.append([case["name"] for case in json_report(result)["cases"]])
    names = [name for shard in shards for name in shard]
    assert sorted(names) == sorted(durations)  # every case in exactly one shard

    # What each shard is expected to take: the recorded durations, each at least
    # the floor under which a recording is the machine's noise, not the case's.
    expected = [
        math.fsum(max(durations[name], NOISE_FLOOR_S) for name in shard) for shard in shards
    ]
    assert max(expected) <= 1.5 * min(expected), (shards, durations)


class _SetsUpOnFirstUse(Family[list[str]]):
    """A family whose first graded run pays a second of set-up, as the regex family
    pays its worker's start."""

    name = "sets_up_on_first_use"
    params = list[str]
    ready = False

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        if run.final_response is not None and not self.ready:  # not the empty run of admission
            with setting_up():
                time.sleep(1.0)
            self.ready = True
        return [CheckResult(self.name, run.final_response is not None, "graded") for _ in params]


class _Plugin:
    @hookimpl
    def zeroclaw_eval_register_families(self, register: Callable[[Family[Any]], None]) -> None:
        register(_SetsUpOnFirstUse())


def test_set_up_on_first_use_is_not_the_time_of_the_case_that_triggered_it(
    tmp_path: Path,
) -> None:
    write_fixture(tmp_path / "suite", fixture({"sets_up_on_first_use": ["x"]}), "case.json")
    result = run_cli(["eval", "run", "--suite", tmp_path / "suite", "--format", "json"], _Plugin())
    assert result.exit_code == 0, result.stderr
    (case,) = json.loads(result.stdout)["cases"]
    # The run itself is a replayed text turn: nowhere near the second of set-up.
    assert case["duration_s"] < 0.9, case
