"""A suite configured as ``suite_dir = "."`` (the shipped live and capability configs)
is named by its directory, not ``.``: in the report, in ``compare`` and in the trend
page's title. Run outside any git work tree, where nothing else would name it."""

from __future__ import annotations

import json
from pathlib import Path

from zeroclaw_eval.testing import fixture, write_fixture

from .conftest import zeroclaw


def test_a_suite_in_the_working_directory_is_named_by_its_directory(tmp_path: Path) -> None:
    suite = tmp_path / "capability"
    write_fixture(suite, fixture({"response_contains": ["done"]}, name="one"), "one.json")
    (suite / "zeroclaw.toml").write_text('[eval]\nsuite_dir = "."\n', encoding="utf-8")
    history = tmp_path / "history.sqlite"
    runs = [
        zeroclaw("eval", "run", "--format", "json", "--history", history, cwd=suite)
        for _ in range(2)
    ]
    assert [json.loads(run.stdout)["suite"] for run in runs] == ["capability", "capability"]
    compared = zeroclaw("eval", "compare", "--history", history, cwd=suite)
    assert compared.returncode == 0, compared.stderr
    assert "of capability (" in compared.stdout
    assert " of . " not in compared.stdout
    page = tmp_path / "page.html"
    drawn = zeroclaw("eval", "history", "--html", page, "--history", history, cwd=suite)
    assert drawn.returncode == 0, drawn.stderr
    assert "<title>zeroclaw-eval history: capability</title>" in page.read_text(encoding="utf-8")
