"""A command agent that cannot start, or never says anything, fails its case fast,
quoting its stderr: not after ``case_timeout_s`` of silence.

The agents are real processes (``tests/agents/faulty_agent.py``); each case's time
limit is far above what the test allows itself, so a regression shows as a wrong
error (the timeout's), not as a slow pass.
"""

from __future__ import annotations

import json
from pathlib import Path

from .bridged_helpers import case_errors, command, configure, run, write_suite
from .test_agent_faults import alive, noted, text_case, wait_for


def run_agent(tmp_path: Path, agent: str, **settings: object) -> dict[str, str | None]:
    config = configure(tmp_path / "project", agent, **settings)
    suite = write_suite(tmp_path / "suite", text_case("first"), text_case("second"))
    result = run(config, suite, "--format", "json")
    assert result.exit_code == 1
    return case_errors(result)


def test_an_agent_that_exits_at_start_fails_at_once_with_its_status_and_stderr(
    tmp_path: Path,
) -> None:
    """A wrapper whose real agent never ran exits, while what it started still holds
    stdout open: the exit is what counts, not the end of stdout."""
    pid_file = tmp_path / "pids.txt"
    agent = command("faulty_agent.py", "wrapper") + (
        f"\nenv = {{PID_FILE = {json.dumps(str(pid_file))}}}"
    )
    errors = run_agent(tmp_path, agent, case_timeout_s=600.0)
    assert errors == {
        name: f"case {name!r}: turn 0: the agent exited before replying (exited with status "
        "2); its stderr ends: faulty agent starting: wrapper | Can't open perl script "
        '"agent.pl": No such file or directory'
        for name in ("first", "second")
    }
    pids, _ = noted(pid_file)
    assert wait_for(lambda: not any(alive(pid) for pid in pids)), "the child outlived its case"


def test_a_script_path_that_does_not_exist_is_quoted_from_the_interpreter(
    tmp_path: Path,
) -> None:
    import sys

    agent = f"command = {json.dumps([sys.executable, 'agent_that_is_not_there.py'])}"
    errors = run_agent(tmp_path, agent, case_timeout_s=600.0)
    assert errors["first"] is not None
    # Whether it exits before or after the turn is written to it is the machine's
    # timing: each is said as it happened.
    assert errors["first"].startswith(
        (
            "case 'first': turn 0: the agent exited before replying (exited with status 2); "
            "its stderr ends: ",
            "case 'first': turn 0: the agent exited before it was sent the turn (exited "
            "with status 2); its stderr ends: ",
        )
    )
    assert "agent_that_is_not_there.py" in errors["first"]
    assert "No such file or directory" in errors["first"]


def test_an_agent_that_never_answers_fails_at_the_first_reply_limit(tmp_path: Path) -> None:
    agent = command("faulty_agent.py", "hang") + "\nfirst_reply_timeout_s = 0.5"
    errors = run_agent(tmp_path, agent, case_timeout_s=600.0)
    assert errors == {
        name: f"case {name!r}: turn 0: the agent sent no reply and no model request within "
        "first_reply_timeout_s=0.5 s of starting; its stderr ends: faulty agent starting: hang"
        for name in ("first", "second")
    }


def test_the_first_reply_limit_does_not_cut_off_an_agent_talking_to_the_model(
    tmp_path: Path,
) -> None:
    """An agent busy with the model (a request on its route) is not silent: the limit
    is for one that never got going, not for a slow first turn."""
    agent = command("faulty_agent.py", "slow") + "\nfirst_reply_timeout_s = 0.5"
    config = configure(tmp_path / "project", agent)
    suite = write_suite(tmp_path / "suite", text_case("first"))
    result = run(config, suite, "--format", "json")
    assert (result.exit_code, case_errors(result)) == (0, {"first": None})


def test_the_agents_sdk_trace_export_is_off_unless_env_turns_it_on(tmp_path: Path) -> None:
    errors = run_agent(tmp_path / "default", command("faulty_agent.py", "tracing"))
    assert errors["first"] is not None
    assert errors["first"].endswith("| OPENAI_AGENTS_DISABLE_TRACING=1")
    agent = command("faulty_agent.py", "tracing") + '\nenv = {OPENAI_AGENTS_DISABLE_TRACING = "0"}'
    errors = run_agent(tmp_path / "on", agent)
    assert errors["first"] is not None
    assert errors["first"].endswith("| OPENAI_AGENTS_DISABLE_TRACING=0")


def test_exitfirst_keeps_the_runs_bridge_and_its_concurrency(tmp_path: Path) -> None:
    """-x used to run each case as a run of its own: a bridge per case, one case at a
    time. Two cases that pass only side by side, on one bridge, pass under -x too."""
    meeting = tmp_path / "meeting"
    meeting.mkdir()
    pid_file = tmp_path / "pids.txt"
    agent = command("faulty_agent.py", "rendezvous") + (
        f"\nenv = {{RENDEZVOUS = {json.dumps(str(meeting))}, "
        f"PID_FILE = {json.dumps(str(pid_file))}}}\nmax_concurrency = 2"
    )
    config = configure(tmp_path / "project", agent)
    suite = write_suite(tmp_path / "suite", text_case("first"), text_case("second"))
    result = run(config, suite, "--format", "json", "-x")
    assert (result.exit_code, case_errors(result)) == (0, {"first": None, "second": None})
    _, urls = noted(pid_file)
    assert len(urls) == 2
    assert len({url.rsplit("/", 3)[0] for url in urls}) == 1, urls  # one bridge, two routes


def test_a_virtual_environments_interpreter_runs_as_named_not_as_its_link_target(
    tmp_path: Path,
) -> None:
    """``command = [".venv/bin/python", "agent.py"]``, as docs/AGENTS.md recommends:
    the link is made absolute, never resolved, or the base interpreter would run
    without the environment's packages."""
    import venv

    project = tmp_path / "project"
    project.mkdir()
    venv.create(project / ".venv", with_pip=False, symlinks=True)
    (project / "agent.py").write_text(
        "import json, os, sys, urllib.request\n"
        "for line in sys.stdin:\n"
        "    turn = json.loads(line)['turn']\n"
        "    body = json.dumps({'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]})\n"
        "    url = os.environ['OPENAI_BASE_URL'] + '/chat/completions'\n"
        "    key = {'Authorization': 'Bearer ' + os.environ['OPENAI_API_KEY']}\n"
        "    request = urllib.request.Request(url, body.encode(), key)\n"
        "    urllib.request.urlopen(request).read()\n"
        "    reply = {'type': 'reply', 'turn': turn, 'content': 'prefix ' + sys.prefix}\n"
        "    print(json.dumps(reply), flush=True)\n",
        encoding="utf-8",
    )
    config = project / "zeroclaw.toml"
    config.write_text(
        '[eval.agent]\ncommand = [".venv/bin/python", "agent.py"]\n', encoding="utf-8"
    )
    case = text_case("venv")
    case["expects"] = {"response_contains": [f"prefix {project / '.venv'}"]}
    result = run(config, write_suite(tmp_path / "suite", case), "--format", "json")
    assert result.exit_code == 0, result.stdout
