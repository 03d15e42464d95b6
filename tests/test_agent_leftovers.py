"""No process an agent starts outlives its case, nor the run: an agent that
double-forks a sleeper into a session of its own (``setsid``: out of the reach of
the process-group kill) has it killed when its case ends, whether the case
passed, failed, timed out or the run was interrupted, and never another case's
(``max_concurrency = 2``). The same for a team's ``mcp_upstream`` stdio server.

Every run is the installed ``zeroclaw`` as a real subprocess (Linux: the sweep
finds orphans through the harness being their child subreaper)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .chat_server import ChatServer, text
from .conftest import ZEROCLAW
from .live_helpers import write_config

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a child subreaper is a Linux feature"
)

#: The sleeper's argv: told apart from any other process by its command line.
SLEEP = ["sleep", "613"]

#: A command agent on plain HTTP: it first double-forks a sleeper that calls setsid
#: (its pid in SLEEPERS/<n>.pid), then answers each turn from the bridge. Its reply
#: says how many sleepers of earlier cases are still alive, and whether its own is.
#: A turn's user input is what it does: "pass" answers at once; "hang" never
#: answers; "wait" first waits until the sleepers of other cases are gone (another
#: case ending beside it).
AGENT = """\
import json, os, sys, time, urllib.request

sleepers = sys.argv[1]
os.makedirs(sleepers, exist_ok=True)
mine = os.path.join(sleepers, f"{os.getpid()}.pid")
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(mine + ".tmp", "w") as out:
            out.write(str(os.getpid()))
        os.rename(mine + ".tmp", mine)
        os.execvp("sleep", SLEEP)
    os._exit(0)
os.wait()
while not os.path.exists(mine):
    time.sleep(0.01)

def alive(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().split(b"\\0")[:2] == [word.encode() for word in SLEEP]
    except OSError:
        return False

def sleeper(path):
    with open(path) as f:
        return int(f.read())

own = sleeper(mine)
for line in sys.stdin:
    turn = json.loads(line)
    mode = turn["user_input"]
    if mode == "hang":
        time.sleep(600)
    if mode == "wait":
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            others = [sleeper(os.path.join(sleepers, name)) for name in os.listdir(sleepers)
                      if name.endswith(".pid") and name != os.path.basename(mine)]
            if others and not any(alive(pid) for pid in others):
                break
            time.sleep(0.05)
    body = {"model": "m", "messages": [{"role": "user", "content": turn["user_input"]}]}
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"],
                 "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        content = json.load(response)["choices"][0]["message"]["content"]
    earlier = [sleeper(os.path.join(sleepers, name)) for name in os.listdir(sleepers)
               if name.endswith(".pid") and name != os.path.basename(mine)]
    said = (f"{content}; earlier sleepers alive: {sum(alive(pid) for pid in earlier)}; "
            f"mine alive: {alive(own)}")
    print(json.dumps({"type": "reply", "turn": turn["turn"], "content": said}), flush=True)
""".replace("SLEEP", repr(SLEEP))


def sleepers(directory: Path) -> list[int]:
    return [int(path.read_text()) for path in sorted(directory.glob("*.pid"))]


def alive(pid: int) -> bool:
    """Whether the sleeper ``pid`` still runs (not a zombie, not a reused id)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return cmdline.split(b"\0")[:2] == [word.encode() for word in SLEEP] and state != b"Z"


def case(name: str, does: str, expects: dict[str, object]) -> dict[str, object]:
    """A case whose agent does ``does`` ("pass", "hang", "wait") in its one turn."""
    return {
        "model_name": name,
        "turns": [
            {"user_input": does, "steps": [{"response": {"type": "text", "content": "hello"}}]}
        ],
        "expects": expects,
    }


def configure(
    tmp_path: Path,
    *cases: dict[str, object],
    agent_keys: dict[str, object] | None = None,
    **eval_keys: object,
) -> Path:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    suite = tmp_path / "suite"
    suite.mkdir()
    for index, fixture in enumerate(cases):
        (suite / f"{index}_{fixture['model_name']}.json").write_text(
            json.dumps(fixture), encoding="utf-8"
        )
    argv = [sys.executable, str(tmp_path / "agent.py"), str(tmp_path / "sleepers")]
    top = "".join(f"{key} = {json.dumps(value)}\n" for key, value in eval_keys.items())
    agent = "".join(f"{key} = {json.dumps(value)}\n" for key, value in (agent_keys or {}).items())
    config = tmp_path / "zeroclaw.toml"
    config.write_text(
        f'[eval]\nsuite_dir = "suite"\n{top}[eval.agent]\ncommand = {json.dumps(argv)}\n{agent}',
        encoding="utf-8",
    )
    return config


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ZEROCLAW), "eval", "run", "--format", "json", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def cleanup(pids: list[int]) -> None:
    for pid in pids:  # never leave one behind, whatever the assertions said
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_passing_and_a_failing_case_each_end_their_agents_sleeper_before_the_next(
    tmp_path: Path,
) -> None:
    configure(
        tmp_path,
        case("passes", "pass", {"response_contains": ["sleepers alive: 0", "mine alive: True"]}),
        case("fails", "pass", {"response_contains": ["absent"]}),
        case("checks", "pass", {"response_contains": ["earlier sleepers alive: 0"]}),
    )
    result = run(tmp_path)
    started = sleepers(tmp_path / "sleepers")
    try:
        cases = {c["name"]: c for c in json.loads(result.stdout)["cases"]}
        assert len(started) == 3
        # Each case saw no sleeper of an earlier one: each was gone with its case.
        assert cases["passes"]["passed"] and cases["checks"]["passed"], result.stdout
        assert not cases["fails"]["passed"] and cases["fails"]["error"] is None
        assert [pid for pid in started if alive(pid)] == []
    finally:
        cleanup(started)


def test_a_timed_out_case_ends_its_agents_sleeper(tmp_path: Path) -> None:
    configure(tmp_path, case("hangs", "hang", {"response_contains": ["hello"]}), case_timeout_s=2)
    result = run(tmp_path)
    started = sleepers(tmp_path / "sleepers")
    try:
        error = json.loads(result.stdout)["cases"][0]["error"]
        assert "did not finish within case_timeout_s=2 s" in error
        assert len(started) == 1 and not alive(started[0])
    finally:
        cleanup(started)


def test_an_interrupted_run_ends_its_agents_sleeper(tmp_path: Path) -> None:
    configure(tmp_path, case("hangs", "hang", {"response_contains": ["hello"]}))
    process = subprocess.Popen(
        [str(ZEROCLAW), "eval", "run", "--format", "json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "sleepers").exists() or not sleepers(tmp_path / "sleepers"):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    started = sleepers(tmp_path / "sleepers")
    try:
        assert alive(started[0])  # running, out of the agent's process group
        process.send_signal(signal.SIGINT)
        stdout, _ = process.communicate(timeout=60)
        assert process.returncode == 130
        assert json.loads(stdout)["interrupted"] == "SIGINT"
        assert not alive(started[0])
    finally:
        cleanup(started)


def test_a_case_ending_beside_another_never_ends_the_other_cases_processes(
    tmp_path: Path,
) -> None:
    """Two cases at once: "a" ends while "b" still runs; b's agent waits until a's
    sleeper is gone, then finds its own alive."""
    configure(
        tmp_path,
        case("b", "wait", {"response_contains": ["mine alive: True"]}),
        case("a", "pass", {"response_contains": ["hello"]}),
        agent_keys={"max_concurrency": 2},
    )
    result = run(tmp_path)
    started = sleepers(tmp_path / "sleepers")
    try:
        cases = {c["name"]: c for c in json.loads(result.stdout)["cases"]}
        assert len(started) == 2
        assert cases["a"]["passed"], result.stdout
        assert cases["b"]["passed"], cases["b"]
        assert [pid for pid in started if alive(pid)] == []
    finally:
        cleanup(started)


#: A team's MCP server that double-forks a sleeper out of its group, then fails.
UPSTREAM = """\
import os, sys
sleepers = sys.argv[1]
os.makedirs(sleepers, exist_ok=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        path = os.path.join(sleepers, f"{os.getpid()}.pid")
        with open(path + ".tmp", "w") as out:
            out.write(str(os.getpid()))
        os.rename(path + ".tmp", path)
        null = os.open(os.devnull, os.O_RDWR)  # as a daemon does: off the server's pipes
        for descriptor in (0, 1, 2):
            os.dup2(null, descriptor)
        os.execvp("sleep", SLEEP)
    os._exit(0)
os.wait()
import time
while not any(name.endswith(".pid") for name in os.listdir(sleepers)):
    time.sleep(0.01)
sys.exit(4)
""".replace("SLEEP", repr(SLEEP))


def test_a_teams_mcp_server_started_for_a_case_ends_its_sleeper_with_it(tmp_path: Path) -> None:
    server_script = tmp_path / "upstream.py"
    server_script.write_text(UPSTREAM, encoding="utf-8")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a.json").write_text(
        json.dumps({"model_name": "a", "turns": [{"user_input": "hi"}],
                    "expects": {"response_contains": ["hi"]}}),
        encoding="utf-8",
    )  # fmt: skip
    upstream = [sys.executable, str(server_script), str(tmp_path / "sleepers")]
    with ChatServer(lambda request: text("hi")) as server:
        config = write_config(tmp_path, server.url, eval_suite_dir="suite", eval_mode="live")
        with config.open("a", encoding="utf-8") as handle:
            handle.write(
                f'\n[eval.agent]\nfactory = "nothing:here"\ntools = "served"\n'
                f"mcp_upstream = {json.dumps(upstream)}\n"
            )
        (tmp_path / "nothing.py").write_text(
            "def here(**kwargs):\n    raise AssertionError('never made')\n", encoding="utf-8"
        )
        result = subprocess.run(
            [str(ZEROCLAW), "eval", "run", "--format", "json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "ZEROCLAW_TEST_API_KEY": "sk-test-placeholder-key"},
            check=False,
        )
    started = sleepers(tmp_path / "sleepers")
    try:
        error = json.loads(result.stdout)["cases"][0]["error"]
        assert "exited with status 4" in error, result.stdout + result.stderr
        assert len(started) == 1 and not alive(started[0])
    finally:
        cleanup(started)
