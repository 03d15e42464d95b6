"""Hostile files and streams, through the real CLI: each has a clear outcome, nothing is lost.

A suite directory that is a file; fixtures that are directories, dangling or
looping links, FIFOs, devices, not UTF-8, too big, or named with a newline; a
10 MB fixture; 10,000 fixtures; a stdout that is full, closed or a broken pipe.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval.case.admission import MAX_FIXTURE_BYTES

from .cli_process import assert_clean_errors, json_report
from .conftest import ZEROCLAW, echo_case, zeroclaw

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX files and streams")


def write(path: Path, case: dict[str, Any]) -> Path:
    path.write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")
    return path


def test_a_suite_directory_that_is_a_file_is_an_error_with_a_json_document(
    tmp_path: Path,
) -> None:
    suite = write(tmp_path / "suite.json", echo_case())
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "json")
    assert result.returncode == 1
    assert assert_clean_errors(result.stderr) == [f"Error: suite {suite}: not a directory"]
    document = json_report(result)
    assert document["errors"] == [f"suite {suite}: not a directory"]
    assert document["all_passed"] is False


# One suite of every kind of unreadable or hostile entry, loaded once; each refusal
# is then checked on its own. Every entry is reported, in one run.
HOSTILE: dict[str, str] = {
    "a_directory.json": "is a directory, not a fixture file",
    "b_dangling.json": "cannot be read: no such file (dangling link?)",
    "c_loop.json": "cannot be read: Too many levels of symbolic links",
    "d_fifo.json": "is not a regular file (a pipe, socket or device)",
    "e_device.json": "is not a regular file (a pipe, socket or device)",
    "f_latin1.json": "not UTF-8 text (invalid byte at offset 19)",
    "g_oversize.json": f"larger than {MAX_FIXTURE_BYTES // 2**20} MiB: too big to be a fixture",
    "h_new\\nline.json": "expects: declares no expectation: a case must assert something",
    "i_big_integer.json": "turns[0].steps[0].response.input_tokens: "
    "integer with 5000 digits is too large",
    "j_lone_surrogate.json": "turns[0].steps[0].response.tool_calls[0].arguments.message: "
    "string holds a lone surrogate \\ud800",
    # A 10 MB value is cut short in the message.
    "k_ten_megabytes.json": 'turns="' + "x" * 55 + '...": ',
}


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    suite = tmp_path_factory.mktemp("hostile")
    (suite / "a_directory.json").mkdir()
    (suite / "b_dangling.json").symlink_to(suite / "missing")
    (suite / "c_loop.json").symlink_to(suite / "c_loop.json")
    os.mkfifo(suite / "d_fifo.json")  # opening it would block forever
    (suite / "e_device.json").symlink_to("/dev/zero")  # reading it would never end
    (suite / "f_latin1.json").write_bytes('{"model_name": "caf\xe9"}'.encode("latin-1"))
    with (suite / "g_oversize.json").open("wb") as handle:
        handle.truncate(MAX_FIXTURE_BYTES + 1)  # sparse: costs no disk
    write(suite / "h_new\nline.json", echo_case(expects={}))
    steps = echo_case()
    steps["turns"][0]["steps"][0]["response"]["input_tokens"] = 0
    (suite / "i_big_integer.json").write_text(
        json.dumps(steps).replace('"input_tokens": 0', '"input_tokens": ' + "9" * 5000),
        encoding="utf-8",
    )
    surrogate = json.dumps(echo_case())  # ASCII JSON, so the escape below stays an escape
    (suite / "j_lone_surrogate.json").write_text(
        surrogate.replace('"message": "hello"', '"message": "\\ud800"'), encoding="utf-8"
    )
    write(suite / "k_ten_megabytes.json", echo_case(turns="x" * 10_000_000))
    write(suite / "z_valid.json", echo_case())
    return suite, zeroclaw("eval", "run", "--suite", suite, "--format", "json")


@POSIX
def test_a_hostile_suite_is_refused_whole_and_lists_every_entry(hostile_run: Any) -> None:
    suite, result = hostile_run
    assert result.returncode == 1
    lines = assert_clean_errors(result.stderr)
    assert lines[0] == (
        f"Error: suite {suite}: {len(HOSTILE)} fixtures refused (of {len(HOSTILE) + 1}); "
        "no case was run"
    )
    assert len(lines) == 1 + len(HOSTILE)
    document = json_report(result)
    assert document["cases"] == []
    assert len(document["errors"]) == 1 + len(HOSTILE)


@POSIX
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_entry_is_refused_in_one_line_naming_it(hostile_run: Any, name: str) -> None:
    suite, result = hostile_run
    expected = f"Error: {suite}/{name}: {HOSTILE[name]}"
    (line,) = [line for line in result.stderr.splitlines() if line.startswith(expected)]
    assert len(line) < 500


def test_a_10_mb_fixture_loads_runs_and_reports_briefly(tmp_path: Path) -> None:
    half = "y" * 5_000_000
    case = echo_case(
        model_name="ten-megabytes",
        turns=[
            {
                "user_input": "Echo this",
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [
                                {"id": "c1", "name": "echo", "arguments": {"message": half + "!"}}
                            ],
                        }
                    },
                    {"response": {"type": "text", "content": half + "end"}},
                ],
            }
        ],
        expects={
            "response_contains": ["yend"],
            "response_matches": ["y+end$"],
            "tool_results_contain": [{"tool": "echo", "needle": "y!"}],
            "response_not_contains": ["z"],
        },
    )
    (tmp_path / "suite").mkdir()
    assert write(tmp_path / "suite" / "big.json", case).stat().st_size > 10_000_000
    result = zeroclaw("eval", "run", "--suite", tmp_path / "suite", "--format", "json")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    document = json_report(result)
    assert [c["passed"] for c in document["cases"]] == [True]
    assert len(result.stdout) < 5_000  # details are cut short, never megabytes


def test_a_suite_of_10000_fixtures_runs_every_one(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    text = json.dumps(echo_case())
    for index in range(10_000):
        (suite / f"case_{index:05d}.json").write_text(text, encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "json")
    document = json_report(result)
    assert [c for c in document["cases"] if not c["passed"]] == []
    assert result.returncode == 0, result.stderr
    assert (document["total"], document["passed"]) == (10_000, 10_000)
    sources = [case["source"] for case in document["cases"]]
    assert sources == sorted(str(path) for path in suite.iterdir())

    # One refused fixture among them is found, named, and keeps the suite from running.
    twice = text.replace('"model_name"', '"model_name": "again", "model_name"')
    (suite / "case_05000.json").write_text(twice, encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite)
    assert result.returncode == 1
    assert assert_clean_errors(result.stderr) == [
        f"Error: suite {suite}: 1 fixture refused (of 10000); no case was run",
        f'Error: {suite / "case_05000.json"}: duplicate key "model_name" at the top level',
    ]


def test_a_model_name_cannot_forge_a_line_of_the_text_report(tmp_path: Path) -> None:
    forged = "x\n✓ forged (forged.json): 3/3 checks\n1/1 cases passed"
    write(tmp_path / "forge.json", echo_case(model_name=forged, expects={"tools_used": ["nope"]}))
    result = zeroclaw("eval", "run", "--suite", tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("✗ x\\n✓ forged (forged.json): 3/3 checks\\n1/1 cases passed (")
    assert lines[-1] == "0/1 cases passed"
    assert not any(line.startswith("✓") for line in lines)


# --- stdout that cannot take the report ---------------------------------------------


@pytest.fixture
def passing_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    suite.mkdir()
    write(suite / "ok.json", echo_case())
    return suite


@POSIX
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_stdout_is_an_error_not_a_silent_pass(passing_suite: Path) -> None:
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [ZEROCLAW, "eval", "run", "--suite", str(passing_suite), "--format", "json"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert result.returncode == 1
    assert assert_clean_errors(result.stderr) == [
        "Error: cannot write the report to stdout: No space left on device"
    ]


@POSIX
def test_a_closed_stdout_is_an_error_not_a_silent_pass(passing_suite: Path) -> None:
    result = subprocess.run(
        ["sh", "-c", '"$0" "$@" >&-', ZEROCLAW, "eval", "run", "--suite", str(passing_suite)],
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert assert_clean_errors(result.stderr) == [
        "Error: cannot write the report: stdout is closed"
    ]


@POSIX
def test_a_reader_that_goes_away_is_an_error_not_a_silent_pass(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    text = json.dumps(echo_case())
    for index in range(300):  # a report larger than a pipe's buffer
        (suite / f"case_{index:03d}.json").write_text(text, encoding="utf-8")
    process = subprocess.Popen(
        [ZEROCLAW, "eval", "run", "--suite", str(suite), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(1) == b"{"
    process.stdout.close()  # like `zeroclaw eval run | head -c 1`
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 1
    assert assert_clean_errors(stderr) == ["Error: cannot write the report to stdout: Broken pipe"]


# --- configuration files --------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'[eval]\nsuite_dir = "caf\xe9"\n', "not UTF-8 text (invalid byte at offset 23)"),
        (b'[eval]\nsuite_dir = "a"\nsuite_dir = "b"\n', "not valid TOML: "),
        (b"[eval]\ncase_timeout = 5\n", "eval.case_timeout=5: unknown key"),
        (None, "cannot read: "),
    ],
    ids=["not-utf8", "duplicate-key", "unknown-key", "directory"],
)
def test_a_hostile_config_file_is_one_error_naming_it(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    config = tmp_path / "zeroclaw.toml"
    if content is None:
        config.mkdir()
    else:
        config.write_bytes(content)
    result = zeroclaw("eval", "run", "--config", config)
    assert result.returncode == 1
    (line,) = assert_clean_errors(result.stderr)
    assert line.startswith(f"Error: {config}: {message}"), line
