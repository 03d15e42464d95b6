"""SIGTERM (how CI cancels a job) while the suite loads: a report saying so, as Ctrl-C
gets, and the exit status of a process that signal ended."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

from .test_faults import faulty_env, finish, start_loading

__all__ = ["faulty_env"]  # the fixture, used by name


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_while_the_suite_loads_gives_an_interrupted_report_and_exits_143(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    process = start_loading(
        tmp_path, faulty_env, "run", "--format", "json", "--report", "text:out.txt"
    )
    process.send_signal(signal.SIGTERM)
    code, stdout, stderr = finish(process)

    assert code == 143
    assert "Traceback" not in stderr
    document = json.loads(stdout)
    assert document["interrupted"] == "SIGTERM"
    assert document["errors"] == ["interrupted by SIGTERM while the suite loaded: no case was run"]
    written = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert written.startswith("error: interrupted by SIGTERM while the suite loaded")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_signal_that_comes_out_of_loading_as_another_error_is_still_the_signal(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    """The interrupt reaches the run as a RuntimeError (a family's rules, or a class
    being made as its module is first imported): the signal the run received wins,
    and the report says the run was interrupted, not that admission failed."""
    process = start_loading(
        tmp_path,
        faulty_env,
        "run",
        "--format",
        "json",
        "--shard",
        "2/2",
        family="swallows_when_admitted",
    )
    process.send_signal(signal.SIGINT)
    code, stdout, stderr = finish(process)

    assert (code, stderr) == (130, "")
    document = json.loads(stdout)
    assert document["interrupted"] == "SIGINT"
    assert document["errors"] == ["interrupted by SIGINT while the suite loaded: no case was run"]
    assert document["shard"] == {"index": 2, "count": 2}  # which shard was interrupted
