"""How a run ends on stdout: a short summary of the failed cases, and colour on a
terminal only (``NO_COLOR`` and ``FORCE_COLOR`` honoured; never in a pipe, never in a
report file). Real subprocesses, and a real pseudo-terminal."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from zeroclaw_eval.testing import fixture, write_fixture

from .conftest import ZEROCLAW, zeroclaw


def test_a_failing_run_ends_with_a_short_summary_of_its_failures(tmp_path: Path) -> None:
    """Among many passing cases the failures are listed again at the end, each with its
    first failing check, as pytest's short summary; cases not run are counted."""
    suite = tmp_path / "suite"
    for index in range(30):
        write_fixture(
            suite, fixture({"response_contains": ["done"]}, name=f"ok{index}"), f"a{index:02}.json"
        )
    expects = {"response_contains": ["first-missing", "second-missing"]}
    write_fixture(suite, fixture(expects, name="broken"), "0.json")  # runs first
    run = zeroclaw("eval", "run", "--suite", "suite", "--no-history", cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout.splitlines()[-3:] == [
        "short summary: 1 failed case",
        'FAILED broken (suite/0.json): response_contains: "first-missing": not found: the '
        'final response is "done"',
        "30/31 cases passed",
    ]
    stopped = zeroclaw(
        "eval", "run", "--suite", "suite", "--no-history", "-x", "-k", "broken or ok1", cwd=tmp_path
    )
    assert "short summary: 1 failed case, 11 not run" in stopped.stdout.splitlines()


def test_colour_only_on_a_terminal_or_when_forced(tmp_path: Path) -> None:
    write_fixture(tmp_path / "suite", fixture({"response_contains": ["done"]}, name="ok"), "a.json")
    write_fixture(tmp_path / "suite", fixture({"response_contains": ["no"]}, name="bad"), "b.json")
    args = ("eval", "run", "--suite", "suite", "--no-history")
    report = tmp_path / "report.txt"
    piped = zeroclaw(
        *args, "--report", f"text:{report}", cwd=tmp_path, env={"NO_COLOR": "", "FORCE_COLOR": ""}
    )
    assert "\033[" not in piped.stdout  # a pipe gets none
    forced = zeroclaw(*args, "--report", f"text:{report}", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert "\033[32m✓\033[0m ok (suite/a.json)" in forced.stdout
    assert forced.stdout.splitlines()[-1] == "\033[1;31m1/2 cases passed\033[0m"
    assert "\033[" not in report.read_text(encoding="utf-8")  # a report file never does
    refused = zeroclaw(*args, cwd=tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\033[" not in refused.stdout  # NO_COLOR wins
    as_json = zeroclaw(*args, "--format", "json", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert "\033[" not in as_json.stdout


def test_colour_on_a_terminal(tmp_path: Path) -> None:
    """A real pseudo-terminal as stdout: colour without being asked."""
    import pty

    write_fixture(tmp_path / "suite", fixture({"response_contains": ["done"]}, name="ok"), "a.json")
    main, secondary = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm"
    process = subprocess.Popen(
        [str(ZEROCLAW), "eval", "run", "--suite", "suite", "--no-history"],
        cwd=tmp_path, stdout=secondary, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    os.close(secondary)
    output = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        output += chunk
    os.close(main)
    assert process.wait(timeout=60) == 0
    assert b"\033[1;32m1/1 cases passed\033[0m" in output


def test_counts_agree_in_number(tmp_path: Path) -> None:
    write_fixture(tmp_path / "suite", fixture({"response_contains": ["done"]}, name="ok"), "a.json")
    check = zeroclaw("eval", "check", "--suite", "suite", cwd=tmp_path)
    assert check.stdout == "1 fixture admitted; none is satisfied by an empty run\n"
    sharded = zeroclaw("eval", "run", "--suite", "suite", "--shard", "2/2", cwd=tmp_path)
    assert "(1 case for 2 shards): use at most 1 shard" in sharded.stderr


def test_the_progress_line_counts_attempts_when_cases_repeat(tmp_path: Path) -> None:
    """3 cases run twice each are 6 attempts, not "6/6 cases"."""
    import pty

    for index in range(3):
        case = fixture({"response_contains": ["done"]}, name=f"c{index}")
        write_fixture(tmp_path / "suite", case, f"{index}.json")
    leader, follower = pty.openpty()
    result = subprocess.run(
        [str(ZEROCLAW), "eval", "run", "--suite", "suite", "--no-history", "--repeat", "2"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=follower, timeout=60, check=False,
    )  # fmt: skip
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: everything was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert result.returncode == 0
    steps = [f"{done}/6 attempts done, 0 failed" for done in range(1, 7)]
    assert shown.decode() == "\r" + "\r".join(steps) + "\r\n"


def test_format_help_names_the_built_in_formats_and_no_plugins_as_built_in() -> None:
    """``junit`` comes from a plugin: the help lists exactly the formats every install
    has, and a plugin's only as an example of one."""
    import re

    from zeroclaw_eval import Registry
    from zeroclaw_eval.plugins.manager import get_plugin_manager

    built_in = sorted(
        Registry.from_plugin_manager(get_plugin_manager(load_entry_points=False)).formatters
    )
    for command in ("run", "merge"):
        result = zeroclaw("eval", command, "--help")
        text = " ".join(result.stdout.split())  # as wrapped for any terminal width
        listed = re.search(r"Report format for stdout \(([^)]*), or a plugin's", text)
        assert listed is not None, result.stdout
        assert sorted(listed[1].split(", ")) == built_in
