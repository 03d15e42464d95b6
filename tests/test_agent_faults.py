"""Faults of a team's agent: each is a one-line run error for its case, the suite goes
on, the exit code is 1, and nothing the agent started outlives the run.

The misbehaving agents are real processes (``tests/agents/faulty_agent.py``) and
real factories (``tests/agents/broken_factories.py``).
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from zeroclaw_eval.testing import zeroclaw_command

from .bridged_helpers import case_errors, command, configure, factory, run, write_suite
from .conftest import echo_case


def text_case(name: str) -> dict[str, Any]:
    """A one-turn case whose model only answers in text."""
    return {
        "model_name": name,
        "turns": [
            {
                "user_input": "Say done",
                "steps": [{"response": {"type": "text", "content": "done"}}],
            }
        ],
        "expects": {"response_contains": ["done"]},
    }


def run_faulty(tmp_path: Path, agent: str, *cases: dict[str, Any], **settings: Any) -> Any:
    config = configure(tmp_path / "project", agent, **settings)
    suite = write_suite(tmp_path / "suite", *(cases or (echo_case(), text_case("second"))))
    return run(config, suite, "--format", "json")


STDERR = "its stderr ends: faulty agent starting: "

# fault -> the run error of the case "second" (after "case 'second': ")
COMMAND_FAULTS = {
    "crash": "turn 0: the agent exited before replying (exited with status 3); "
    + STDERR
    + "crash | Traceback: something broke inside the agent",
    "garbage": "turn 0: the agent printed 'hello, I am not JSON' on stdout, not "
    '{"type": "reply", "turn": 0, "content": "..."}; ' + STDERR + "garbage",
    "nothing": "turn 0: the agent exited before replying (exited with status 0); "
    + STDERR
    + "nothing",
    "mid-turn": "turn 0: the agent exited before replying (exited with status 0); "
    + STDERR
    + "mid-turn",
    "wrong-turn": "turn 0: the agent printed "
    '\'{"type": "reply", "turn": 7, "content": "done"}\' on stdout, not '
    '{"type": "reply", "turn": 0, "content": "..."}; ' + STDERR + "wrong-turn",
    "malformed": "turn 0: malformed request: the body is not JSON (Expecting property name "
    "enclosed in double quotes: line 1 column 2 (char 1))",
    "linger": "the agent did not exit within grace_s=0.5 s after its stdin was closed: its "
    "process group was killed; " + STDERR + "linger",
    "fail-exit": "the agent exited with status 4 after its last reply; " + STDERR + "fail-exit",
}


@pytest.mark.parametrize("fault", sorted(COMMAND_FAULTS))
def test_a_misbehaving_agent_process_fails_its_case_and_the_suite_goes_on(
    tmp_path: Path, fault: str
) -> None:
    agent = command("faulty_agent.py", fault) + "\ngrace_s = 0.5"
    result = run_faulty(tmp_path, agent, text_case("first"), text_case("second"))
    assert result.exit_code == 1
    assert result.stderr == ""
    errors = case_errors(result)
    assert list(errors) == ["first", "second"]  # every case ran and is reported
    assert errors["second"] == f"case 'second': {COMMAND_FAULTS[fault]}"
    assert "\n" not in errors["second"]


FACTORY_FAULTS = {
    "broken_factories:raising": "the agent factory broken_factories:raising raised "
    "ValueError: no credentials for the vector store",
    "broken_factories:no_run_turn": "the agent factory broken_factories:no_run_turn returned "
    "object, which has no run_turn(user_input) method",
    "broken_factories:raising_turn": "turn 0: the agent raised RuntimeError: cannot handle "
    "'Echo hello'",
}


@pytest.mark.parametrize("spec", sorted(FACTORY_FAULTS))
def test_a_failing_factory_fails_its_case_and_the_suite_goes_on(tmp_path: Path, spec: str) -> None:
    result = run_faulty(tmp_path, factory(spec), echo_case(), echo_case(model_name="second"))
    assert result.exit_code == 1
    errors = case_errors(result)
    assert errors == {
        "echo-hello": f"case 'echo-hello': {FACTORY_FAULTS[spec]}",
        "second": f"case 'second': {FACTORY_FAULTS[spec]}",
    }


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        (
            "unimportable_agent:make_agent",
            "cannot import module 'unimportable_agent': ModuleNotFoundError: "
            "No module named 'no_such_dependency_of_the_agent'",
        ),
        ("broken_factories:nope", "module 'broken_factories' has no 'nope'"),
        ("broken_factories:NOT_CALLABLE", "'NOT_CALLABLE' is int, not callable"),
    ],
)
def test_an_agent_module_that_does_not_import_is_one_line_before_any_case_runs(
    tmp_path: Path, spec: str, problem: str
) -> None:
    result = run_faulty(tmp_path, factory(spec))
    config = tmp_path / "project" / "zeroclaw.toml"
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"Error: {config}: eval.agent.factory={spec!r}: {problem}\n"


def test_a_command_that_does_not_exist_is_a_configuration_error(tmp_path: Path) -> None:
    result = run_faulty(tmp_path, 'command = ["no-such-agent-program", "--serve"]')
    config = tmp_path / "project" / "zeroclaw.toml"
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {config}: eval.agent.command[0]='no-such-agent-program': "
        "no such executable program on PATH\n"
    )


# --- nothing outlives the run -------------------------------------------------------


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "\nState:\tZ" not in status


def noted(pid_file: Path) -> tuple[list[int], list[str]]:
    """The pids and bridge URLs the faulty agents wrote down."""
    lines = pid_file.read_text(encoding="utf-8").splitlines() if pid_file.exists() else []
    pids = [int(line.split()[1]) for line in lines if line.startswith("pid ")]
    urls = [line.split()[1] for line in lines if line.startswith("url ")]
    return pids, urls


def port_closed(url: str) -> bool:
    parts = urlsplit(url)
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((parts.hostname or "", parts.port or 0)) != 0


def wait_for(condition: Any, timeout_s: float = 10) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_hung_agent_is_killed_with_its_whole_process_group_at_the_case_timeout(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pids.txt"
    agent = (
        command("faulty_agent.py", "hang") + f"\nenv = {{PID_FILE = {json.dumps(str(pid_file))}}}"
    )
    before = set(threading.enumerate())
    started = time.monotonic()
    result = run_faulty(
        tmp_path, agent, text_case("first"), text_case("second"), case_timeout_s=1.0
    )
    assert time.monotonic() - started < 8
    assert result.exit_code == 1
    assert case_errors(result) == {
        name: f"case {name!r}: did not finish within case_timeout_s=1 s: abandoned (a hung "
        "tool, provider or family?); the agent under test was stopped; its stderr ends: "
        "faulty agent starting: hang"
        for name in ("first", "second")
    }
    pids, urls = noted(pid_file)
    assert len(pids) == 4 and len(urls) == 2  # two agents, each with a child
    assert wait_for(lambda: not any(alive(pid) for pid in pids)), [p for p in pids if alive(p)]
    assert all(port_closed(url) for url in urls)
    assert wait_for(lambda: set(threading.enumerate()) <= before), (
        set(threading.enumerate()) - before
    )


def test_what_a_good_agent_leaves_running_is_killed_when_its_case_ends(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids.txt"
    agent = (
        command("faulty_agent.py", "orphan") + f"\nenv = {{PID_FILE = {json.dumps(str(pid_file))}}}"
    )
    result = run_faulty(tmp_path, agent, text_case("first"))
    assert (result.exit_code, case_errors(result)) == (0, {"first": None})
    pids, _ = noted(pid_file)
    assert len(pids) == 2
    assert wait_for(lambda: not any(alive(pid) for pid in pids)), [p for p in pids if alive(p)]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_run_leaves_no_agent_process_behind(tmp_path: Path, signum: int) -> None:
    pid_file = tmp_path / "pids.txt"
    agent = (
        command("faulty_agent.py", "hang") + f"\nenv = {{PID_FILE = {json.dumps(str(pid_file))}}}"
    )
    config = configure(tmp_path / "project", agent)
    suite = write_suite(tmp_path / "suite", text_case("first"))
    process = subprocess.Popen(
        [*zeroclaw_command(), "eval", "run", "--config", str(config), "--suite", str(suite)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_for(lambda: len(noted(pid_file)[0]) == 2), "the agent never started"
        process.send_signal(signum)
        stdout, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 128 + signum
    assert "interrupted by" in stdout
    pids, urls = noted(pid_file)
    assert wait_for(lambda: not any(alive(pid) for pid in pids)), [p for p in pids if alive(p)]
    assert port_closed(urls[0])


def test_only_an_agent_that_needs_it_starts_the_bridge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zeroclaw_eval.bridge import server as bridge

    def refuse(self: bridge.ModelBridge) -> None:
        raise OSError("no port for you")

    monkeypatch.setattr(bridge.ModelBridge, "start", refuse)
    suite = write_suite(tmp_path / "suite", echo_case())
    config = configure(tmp_path / "project", command("echo_agent.py"))
    assert run(config, suite, "--agent", "reference").exit_code == 0
    result = run(config, suite)
    assert (result.exit_code, result.stdout) == (1, "")
    assert (
        result.stderr == "Error: the model bridge could not start on 127.0.0.1: no port for you\n"
    )


@pytest.mark.parametrize(("setting", "passed"), [("", False), ("max_concurrency = 2", True)])
def test_max_concurrency_runs_bridged_cases_side_by_side(
    tmp_path: Path, setting: str, passed: bool
) -> None:
    meeting = tmp_path / "meeting"
    meeting.mkdir()
    agent = command("faulty_agent.py", "rendezvous") + (
        f"\nenv = {{RENDEZVOUS = {json.dumps(str(meeting))}}}\n{setting}"
    )
    result = run_faulty(tmp_path, agent, text_case("first"), text_case("second"))
    errors = case_errors(result)
    if passed:
        assert (result.exit_code, errors) == (0, {"first": None, "second": None})
    else:  # one at a time: each waited alone
        assert result.exit_code == 1
        assert errors["first"] is not None
        assert errors["first"].startswith(
            "case 'first': turn 0: the agent reported an error: no other case ran beside this one"
        )
