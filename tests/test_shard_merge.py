"""Four ``--shard K/4`` runs as separate processes, merged: the same verdict, cases and
exit code as running the suite whole, for a green and for a red suite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .cli_process import json_report
from .conftest import PROJECT, echo_case, zeroclaw, zeroclaw_all
from .test_merge import verdict

SHARDS = 4


def work_tree(tmp_path: Path, red: bool) -> Path:
    """A checkout holding the shipped regression suite; the red one has two failing cases."""
    root = tmp_path / ("red" if red else "green")
    (root / ".git").mkdir(parents=True)
    suite = root / "evals" / "regression"
    shutil.copytree(PROJECT / "evals" / "regression", suite)
    if red:
        for name in ("a_first_red", "z_last_red"):
            case = echo_case(model_name=name, expects={"response_contains": ["absent"]})
            (suite / f"{name}.json").write_text(json.dumps(case), encoding="utf-8")
    return root


def without_timings(value: Any) -> Any:
    """A report document with every ``duration_s`` left out: all else must be equal."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k != "duration_s"}
    if isinstance(value, list):
        return [without_timings(item) for item in value]
    return value


@pytest.mark.parametrize(
    ("red", "options"),
    [(False, []), (True, []), (True, ["--repeat", "3"])],
    ids=["green", "red", "red-repeated"],
)
def test_four_shards_merge_into_the_unsharded_run(
    red: bool, options: list[str], tmp_path: Path
) -> None:
    root = work_tree(tmp_path, red)
    history = ["--history", str(tmp_path / "history.sqlite")]
    # The whole run is the yardstick, not part of the sharded run: filed in a history
    # of its own, its durations (appended while the shards start) cannot move the cut.
    apart = ["--history", str(tmp_path / "whole-history.sqlite")]
    runs: dict[str, tuple[list[str | Path], Path | None]] = {
        "whole": (["eval", "run", "--format", "json", *options, *apart], root)
    }
    for k in range(1, SHARDS + 1):
        shard = ["--shard", f"{k}/{SHARDS}", "--report", f"json:shard-{k}.json"]
        runs[f"shard-{k}"] = (["eval", "run", *shard, *options, *history], root)
    done = zeroclaw_all(runs)
    whole = json_report(done["whole"])
    assert done["whole"].returncode == (1 if red else 0)
    shard_docs: list[dict[str, Any]] = []
    for k in range(1, SHARDS + 1):
        doc = json.loads((root / f"shard-{k}.json").read_text(encoding="utf-8"))
        assert doc["shard"] == {"index": k, "count": SHARDS}
        assert doc["suite_total"] == whole["total"]
        assert done[f"shard-{k}"].returncode == (0 if doc["all_passed"] else 1)
        shard_docs.append(doc)
    # Every case in exactly one shard, and each shard did real work.
    sources = sorted(case["source"] for doc in shard_docs for case in doc["cases"])
    assert sources == sorted(case["source"] for case in whole["cases"])
    assert all(doc["cases"] for doc in shard_docs)
    if red:  # the failures fell in different shards: no single shard tells the verdict
        assert sum(1 for doc in shard_docs if not doc["all_passed"]) == 2

    merged = zeroclaw(
        "eval",
        "merge",
        *(f"shard-{k}.json" for k in range(1, SHARDS + 1)),
        "--format",
        "json",
        cwd=root,
    )
    assert merged.returncode == done["whole"].returncode, merged.stderr
    assert verdict(json_report(merged)) == verdict(whole)
    # Everything else the whole run reported too: repeats, attempts, pass@k, tokens.
    assert without_timings(json_report(merged)) == without_timings(whole)

    # Three shards are not the run: an error, never a partial green.
    partial = zeroclaw("eval", "merge", "shard-1.json", "shard-2.json", "shard-3.json", cwd=root)
    assert partial.returncode == 1
    assert f"shard 4/{SHARDS} is missing" in partial.stderr


def test_four_k_shards_merge_into_the_unsharded_k_run(tmp_path: Path) -> None:
    root = work_tree(tmp_path, red=True)
    keyword = ["-k", "echo or unicode or red"]
    runs: dict[str, tuple[list[str | Path], Path | None]] = {
        "whole": (["eval", "run", "--format", "json", *keyword], root),
        "whole-text": (["eval", "run", *keyword], root),
    }
    for k in range(1, SHARDS + 1):
        shard = ["--shard", f"{k}/{SHARDS}", "--report", f"json:shard-{k}.json"]
        runs[f"shard-{k}"] = (["eval", "run", *shard, *keyword], root)
    runs["other-k"] = (
        ["eval", "run", "--shard", f"4/{SHARDS}", "--report", "json:other-4.json", "-k", "echo"],
        root,
    )
    done = zeroclaw_all(runs)
    whole = json_report(done["whole"])
    assert done["whole"].returncode == 1
    # The selection narrowed the suite: what the shards must add up to is the selection.
    assert whole["selected_total"] == whole["total"] < whole["suite_total"]
    assert whole["keyword"] == "echo or unicode or red"
    shard_docs = [
        json.loads((root / f"shard-{k}.json").read_text(encoding="utf-8"))
        for k in range(1, SHARDS + 1)
    ]
    assert all(doc["cases"] for doc in shard_docs)
    assert sum(len(doc["cases"]) for doc in shard_docs) == whole["total"]
    assert all(doc["selected_total"] == whole["total"] for doc in shard_docs)
    selected, total = whole["total"], whole["suite_total"]
    assert (
        done["shard-1"]
        .stdout.splitlines()[-1]
        .endswith(f"(shard 1/{SHARDS} of {selected} selected of a suite of {total} cases)")
    )

    names = [f"shard-{k}.json" for k in range(1, SHARDS + 1)]
    merged = zeroclaw("eval", "merge", *names, "--format", "json", cwd=root)
    assert merged.returncode == 1, merged.stderr  # red, as the -k run is: not refused
    assert "Error" not in merged.stderr
    assert without_timings(json_report(merged)) == without_timings(whole)
    as_text = zeroclaw("eval", "merge", *names, cwd=root)
    whole_last = done["whole-text"].stdout.splitlines()[-1]
    assert whole_last.endswith(f"({total - selected} of {total} deselected)")
    assert as_text.stdout.splitlines()[-1] == whole_last

    # A shard cut from another -k selection is not part of this run.
    mixed = zeroclaw("eval", "merge", *names[:3], "other-4.json", cwd=root)
    assert mixed.returncode == 1
    assert "keyword='echo', but shard-1.json has keyword='echo or unicode or red'" in mixed.stderr
