"""An agent process that misbehaves in one way, named by its first argument.

``PID_FILE`` (environment), when set, receives its pid, its child's pid (for
``hang``) and its bridge URL, so a test can check nothing outlived the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def note(*lines: str) -> None:
    path = os.environ.get("PID_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.writelines(f"{line}\n" for line in lines)


VALID = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()


def post(body: bytes) -> None:
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        data=body,
        headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
    )
    try:
        urllib.request.urlopen(request, timeout=10).read()
    except urllib.error.HTTPError as exc:
        print(f"the bridge said {exc.code}", file=sys.stderr)


def reply(turn: int) -> None:
    print(json.dumps({"type": "reply", "turn": turn, "content": "done"}), flush=True)


def main() -> None:
    fault = sys.argv[1]
    note(f"pid {os.getpid()}", f"url {os.environ['OPENAI_BASE_URL']}")
    print(f"faulty agent starting: {fault}", file=sys.stderr, flush=True)
    if fault == "wrapper":
        # A wrapper whose real agent could not start: it exits, but what it left
        # running holds stdout open, so stdout never ends.
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        note(f"pid {child.pid}")
        print('Can\'t open perl script "agent.pl": No such file or directory', file=sys.stderr)
        sys.exit(2)
    if fault == "tracing":  # says whether the SDK's trace export is off, and stops
        tracing = os.environ.get("OPENAI_AGENTS_DISABLE_TRACING")
        print(f"OPENAI_AGENTS_DISABLE_TRACING={tracing}", file=sys.stderr)
        sys.exit(3)
    line = sys.stdin.readline()
    if fault == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        note(f"pid {child.pid}")
        time.sleep(600)
    elif fault == "crash":
        print("Traceback: something broke inside the agent", file=sys.stderr)
        sys.exit(3)
    elif fault == "garbage":
        print("hello, I am not JSON", flush=True)
        time.sleep(600)
    elif fault == "nothing":
        sys.stdout.close()
        sys.exit(0)
    elif fault == "mid-turn":
        post(VALID)
        os._exit(0)
    elif fault == "malformed":
        post(b"{this is not json")
        reply(0)
        sys.stdin.read()
    elif fault == "wrong-turn":
        reply(7)
        sys.stdin.read()
    elif fault == "rendezvous":
        meeting = Path(os.environ["RENDEZVOUS"])
        (meeting / str(os.getpid())).touch()
        deadline = time.monotonic() + 5
        while len(list(meeting.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        if len(list(meeting.iterdir())) < 2:
            error = {"type": "error", "turn": 0, "message": "no other case ran beside this one"}
            print(json.dumps(error), flush=True)
        else:
            post(VALID)
            reply(0)
        sys.stdin.read()
    elif fault == "orphan":
        post(VALID)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        note(f"pid {child.pid}")
        reply(0)
        sys.stdin.read()
        sys.exit(0)  # its child still runs, holding stdout open
    elif fault == "slow":  # asks the model at once, then takes its time to answer
        post(VALID)
        time.sleep(1.0)
        reply(json.loads(line)["turn"])
        sys.stdin.read()
    elif fault == "linger":
        post(VALID)
        reply(json.loads(line)["turn"])
        sys.stdin.read()
        time.sleep(600)
    elif fault == "fail-exit":
        post(VALID)
        reply(json.loads(line)["turn"])
        sys.stdin.read()
        sys.exit(4)


if __name__ == "__main__":
    main()
