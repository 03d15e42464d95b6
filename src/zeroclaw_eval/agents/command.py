"""A team's agent in any language, as a command: ``[eval.agent] command = [...]``.

One process per case attempt, in its own process group, in the case workspace,
with the harness's environment plus ``env`` and the bridge route:
``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``ZEROCLAW_EVAL_WORKSPACE`` (and
``ZEROCLAW_EVAL_MCP_URL``, the case's MCP endpoint, when ``[eval.agent] tools =
"served"``). The
protocol is JSON lines, UTF-8, one object per line::

    harness -> agent (stdin):  {"type": "turn", "turn": 0, "user_input": "Echo hello"}
    agent -> harness (stdout): {"type": "reply", "turn": 0, "content": "The echo said: hello"}
                            or {"type": "error", "turn": 0, "message": "why"}

After the last reply the harness closes stdin; the agent must exit 0 within
``grace_s`` or its process group is killed. Stderr is the agent's log: kept, and
its tail quoted in every run error. Anything else on stdout is a run error.
Whatever happens (an error, the case's time limit, an interruption), the whole
process group is killed and reaped before the case is left: nothing outlives it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from contextlib import suppress
from pathlib import Path
from typing import IO, Any

from zeroclaw_eval.agents.base import MCP_URL_ENV, ModelSide
from zeroclaw_eval.agents.bridged import BridgedAgent, BridgedSession
from zeroclaw_eval.config import AgentTable, EvalConfig
from zeroclaw_eval.errors import ConfigError, RunError
from zeroclaw_eval.workspace import case_workspace

#: The longest line the agent may print on stdout.
MAX_LINE_BYTES = 16 * 1024 * 1024

#: How much of the agent's stderr a run error quotes.
STDERR_TAIL_CHARS = 600

#: How much of an unexpected stdout line a run error quotes.
QUOTE_CHARS = 120


def resolve_command(command: list[str], base_dir: Path) -> list[str]:
    """``command`` with its relative paths made absolute against ``base_dir``.

    The process runs in the case workspace, so ``["node", "agent.mjs"]`` must name
    the file beside the configuration: a word naming an existing file there (and a
    program given as a relative path) is made absolute; other words are left alone.
    """
    resolved = []
    for index, word in enumerate(command):
        candidate = base_dir / word
        relative_program = index == 0 and os.sep in word
        if not Path(word).is_absolute() and (relative_program or candidate.is_file()):
            resolved.append(str(candidate.resolve()))
        else:
            resolved.append(word)
    return resolved


class CommandAgent(BridgedAgent):
    """An agent run as a command, once per case, speaking JSON lines."""

    name = "command"
    description = "an agent in any language, run by [eval.agent] command"

    def __init__(self, table: AgentTable, base_dir: Path, field: str) -> None:
        super().__init__(table)
        assert table.command is not None
        self.argv = resolve_command(table.command, base_dir)
        if table.mcp_upstream is not None:
            self.mcp_upstream = resolve_command(table.mcp_upstream, base_dir)
        self.shown = shlex.join(table.command)
        self.env = dict(table.env)
        self.grace_s = table.grace_s
        self.field = field

    @property
    def label(self) -> str:
        return f"command {self.shown}"

    def check_config(self, config: EvalConfig) -> None:
        program = self.argv[0]
        found = shutil.which(program) if os.sep not in program else program
        if found is None or not os.access(found, os.X_OK):
            raise ConfigError(
                f"{self.field}[0]={program!r}: no such executable program"
                + (" on PATH" if os.sep not in program else "")
            )

    def start(self, side: ModelSide) -> CommandSession:
        return CommandSession(side, self)


class CommandSession(BridgedSession):
    """One agent process for one case attempt."""

    def __init__(self, side: ModelSide, agent: CommandAgent) -> None:
        super().__init__(side, serve_tools=agent.serves_tools)
        self._agent = agent
        self._lock = threading.Lock()
        self._owner = threading.current_thread()
        # A file, not a pipe: nothing has to drain it, and only its tail is read.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in release
        workspace = case_workspace()
        env = {
            **os.environ,
            **agent.env,
            "OPENAI_BASE_URL": self.route.base_url,
            "OPENAI_API_KEY": self.route.api_key,
            # The Anthropic SDKs add /v1 themselves: they get the route's root.
            "ANTHROPIC_BASE_URL": self.route.root_url,
            "ANTHROPIC_API_KEY": self.route.api_key,
            "ZEROCLAW_EVAL_WORKSPACE": str(workspace),
        }
        if self.mcp_url is not None:  # [eval.agent] tools = "served"
            env[MCP_URL_ENV] = self.mcp_url
        try:
            self.process = subprocess.Popen(
                agent.argv,
                cwd=workspace,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,  # its own process group: killed whole
            )
        except OSError as exc:
            self._stderr.close()
            self._close_routes()
            raise RunError(
                f"the agent command {agent.shown} could not start: {exc.strerror or exc}"
            ) from None
        self._stdin: IO[bytes] = self.process.stdin  # type: ignore[assignment]
        self._stdout: IO[bytes] = self.process.stdout  # type: ignore[assignment]

    def exchange_turn(self, turn: int, user_input: str) -> str:
        line = {"type": "turn", "turn": turn, "user_input": user_input}
        try:
            self._stdin.write(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
            self._stdin.flush()
        except (OSError, ValueError):  # a broken pipe: the agent is gone
            raise self._failure(
                f"turn {turn}: the agent exited before it was sent the turn", ended=True
            ) from None
        raw = self._read_line()
        if not raw:
            raise self._failure(f"turn {turn}: the agent exited before replying", ended=True)
        return self._reply(turn, raw)

    def _read_line(self) -> bytes:
        try:
            return self._stdout.readline(MAX_LINE_BYTES)
        except (OSError, ValueError):  # closed under us: the case was abandoned
            return b""

    def _reply(self, turn: int, raw: bytes) -> str:
        if not raw.endswith(b"\n") and len(raw) >= MAX_LINE_BYTES:
            raise self._failure(
                f"turn {turn}: the agent printed a line longer than {MAX_LINE_BYTES} bytes"
            )
        try:
            message: Any = json.loads(raw.decode("utf-8"))
        except ValueError:
            message = None
        expected = f'{{"type": "reply", "turn": {turn}, "content": "..."}}'
        if not isinstance(message, dict) or message.get("turn") != turn:
            raise self._failure(
                f"turn {turn}: the agent printed {_quote(raw)} on stdout, not {expected}"
            )
        kind = message.get("type")
        if kind == "reply" and isinstance(message.get("content"), str):
            return str(message["content"])
        if kind == "error" and isinstance(message.get("message"), str):
            raise self._failure(f"turn {turn}: the agent reported an error: {message['message']}")
        raise self._failure(
            f"turn {turn}: the agent printed {_quote(raw)} on stdout, not {expected}"
        )

    def finish(self) -> None:
        with suppress(OSError, ValueError):
            self._stdin.close()
        try:
            status = self.process.wait(timeout=self._agent.grace_s)
        except subprocess.TimeoutExpired:
            self._kill()
            raise self._failure(
                f"the agent did not exit within grace_s={self._agent.grace_s:g} s after its "
                "stdin was closed: its process group was killed"
            ) from None
        if status != 0:
            raise self._failure(f"the agent {_ended(status)} after its last reply")
        # Whatever the agent left running must not hold stdout open: kill the group
        # before reading what is left there.
        self._kill()
        extra = self._stdout.read(QUOTE_CHARS + 1) if not self._stdout.closed else b""
        if extra.strip():
            raise self._failure(f"the agent printed {_quote(extra)} on stdout after its last reply")

    def release(self) -> None:
        """Kill the process group and reap the process; from any thread, idempotent."""
        self._kill()
        if threading.current_thread() is self._owner:
            for stream in (self._stdin, self._stdout, self._stderr):
                with suppress(OSError, ValueError):
                    stream.close()

    def _kill(self) -> None:
        with self._lock:
            # The group may outlive its leader (a child it spawned): kill it whatever
            # the leader's state, then reap the leader.
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            with suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)

    def _failure(self, message: str, *, ended: bool = False) -> RunError:
        """``message``, with how the process ended and the tail of its stderr.

        ``ended``: the agent closed its stdout, so it is exiting; wait (up to the
        grace period) to say how.
        """
        status = self.process.poll()
        if status is None and ended:
            with suppress(subprocess.TimeoutExpired):
                status = self.process.wait(timeout=self._agent.grace_s)
        how = f" ({_ended(status)})" if ended and status is not None else ""
        tail = self._stderr_tail()
        stderr = f"; its stderr ends: {tail}" if tail else "; its stderr is empty"
        return RunError(f"{message}{how}{stderr}")

    def _stderr_tail(self) -> str:
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - STDERR_TAIL_CHARS * 4))
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        tail = " | ".join(lines)
        return tail if len(tail) <= STDERR_TAIL_CHARS else "..." + tail[-STDERR_TAIL_CHARS:]


def _ended(status: int) -> str:
    if status < 0:
        with suppress(ValueError):
            return f"was killed by {signal.Signals(-status).name}"
        return f"was killed by signal {-status}"
    return f"exited with status {status}"


def _quote(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").rstrip("\n")
    if not text:
        return "an empty line"
    return repr(text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "...")
