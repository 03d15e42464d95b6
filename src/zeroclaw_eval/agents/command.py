"""A team's agent in any language, as a command: ``[eval.agent] command = [...]``.

One process per case attempt, in its own process group, in the case workspace,
with the harness's environment (less the variable holding the provider's key:
the bridge holds it, the agent never needs it) plus ``env`` and the bridge route:
``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``ZEROCLAW_EVAL_WORKSPACE`` (and
``ZEROCLAW_EVAL_MCP_URL``, the case's MCP endpoint, when ``[eval.agent] tools =
"served"``, and ``TRACEPARENT``, the case attempt's span, when a report traces
the run: ``--report otel:...``). The
protocol is JSON lines, UTF-8, one object per line::

    harness -> agent (stdin):  {"type": "turn", "turn": 0, "user_input": "Echo hello"}
    agent -> harness (stdout): {"type": "reply", "turn": 0, "content": "The echo said: hello"}
                            or {"type": "error", "turn": 0, "message": "why"}

After the last reply the harness closes stdin; the agent must exit 0 within
``grace_s`` or its process group is killed. Stderr is the agent's log: kept, and
its tail quoted in every run error, the provider's key redacted from it (as from
everything quoted of the agent). Anything else on stdout is a run error.
Whatever happens (an error, the case's time limit, an interruption), the whole
process group is killed and reaped before the case is left, and so is every
process the agent started that left the group (a daemon that called ``setsid``):
each carries the case's mark (``ZEROCLAW_EVAL_CASE``) and, on Linux, the harness
is their subreaper, so a sweep finds them (:mod:`zeroclaw_eval.util.processes`).

An agent that cannot start fails fast: the process exiting is noticed at once,
even while something it started still holds its stdout open (a wrapper script
whose real agent never ran), and a process that stays silent (no line on stdout,
no request to the bridge) for ``first_reply_timeout_s`` fails its case then, not
at ``case_timeout_s``. Both errors quote the tail of its stderr.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import IO, Any

from zeroclaw_eval.agents.base import ModelSide
from zeroclaw_eval.agents.bridged import BridgedAgent, BridgedSession
from zeroclaw_eval.agents.dialect import CHAT, Dialect
from zeroclaw_eval.config import AgentTable, EvalConfig
from zeroclaw_eval.errors import ConfigError, RunError
from zeroclaw_eval.report.trace import TRACEPARENT_ENV
from zeroclaw_eval.toolserver.headers import MCP_URL_ENV
from zeroclaw_eval.util.processes import Mark, adopt_orphans
from zeroclaw_eval.workspace import case_workspace

#: The longest line the agent may print on stdout.
MAX_LINE_BYTES = 16 * 1024 * 1024

#: How much of the agent's stderr a run error quotes.
STDERR_TAIL_CHARS = 600

#: How much of an unexpected stdout line a run error quotes.
QUOTE_CHARS = 120

#: How often the exit of an agent is checked for where the system cannot signal it
#: (no ``pidfd_open``: not Linux), in seconds.
EXIT_POLL_S = 0.05

#: Set for every command agent unless ``env`` says otherwise: the OpenAI Agents
#: SDK exports traces at exit, which offline outlives ``grace_s``, and online would
#: send the bridge's key to a service that does not know it.
QUIET_SDK_ENV = {"OPENAI_AGENTS_DISABLE_TRACING": "1"}


def resolve_command(command: list[str], base_dir: Path) -> list[str]:
    """``command`` with its relative paths made absolute against ``base_dir``.

    The process runs in the case workspace, so ``["node", "agent.mjs"]`` must name
    the file beside the configuration: a word naming an existing file there (and a
    program given as a relative path) is made absolute; other words are left alone.
    A path is made absolute, never resolved: a virtual environment's ``python`` is a
    link to the base interpreter, which run by its target's name would not be in the
    environment.
    """
    resolved = []
    for index, word in enumerate(command):
        candidate = base_dir / word
        relative_program = index == 0 and os.sep in word
        if not Path(word).is_absolute() and (relative_program or candidate.is_file()):
            resolved.append(os.path.abspath(candidate))
        else:
            resolved.append(word)
    return resolved


def upstream_of(table: AgentTable, base_dir: Path) -> list[str] | str | None:
    """The table's ``mcp_upstream``: a URL as written, an argv resolved as a command is."""
    upstream = table.mcp_upstream
    if upstream is None or isinstance(upstream, str):
        return upstream
    return resolve_command(upstream, base_dir)


class CommandAgent(BridgedAgent):
    """An agent run as a command, once per case, speaking JSON lines."""

    name = "command"
    description = "an agent in any language, run by [eval.agent] command"

    def __init__(
        self, table: AgentTable, base_dir: Path, field: str, dialect: Dialect = CHAT
    ) -> None:
        super().__init__(table, dialect)
        assert table.command is not None
        self.argv = resolve_command(table.command, base_dir)
        self.mcp_upstream = upstream_of(table, base_dir)
        self.mcp_upstream_timeout_s = table.mcp_upstream_timeout_s
        self.shown = shlex.join(table.command)
        self.env = dict(table.env)
        self.grace_s = table.grace_s
        self.first_reply_timeout_s = table.first_reply_timeout_s
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
        super().__init__(side, serve_tools=agent.serves_tools, dialect=agent.dialect)
        self._agent = agent
        self._lock = threading.Lock()
        self._owner = threading.current_thread()
        # A file, not a pipe: nothing has to drain it, and only its tail is read.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in release
        self._secrets = side.secrets
        # Every process of the case carries its mark, and an orphan among them comes
        # back to the harness instead of init: the sweep at the end finds them all.
        adopt_orphans()
        self._mark = Mark()
        self._swept = False
        workspace = case_workspace()
        env = {
            **side.secrets.environment(os.environ),  # the provider's key stays with the bridge
            **QUIET_SDK_ENV,
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
        if side.traceparent is not None:  # a report traces the run: the agent's spans join it
            env[TRACEPARENT_ENV] = side.traceparent
        try:
            self.process = subprocess.Popen(
                agent.argv,
                cwd=workspace,
                env=self._mark.environment(env),
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
        self._mark.lead(self.process.pid)
        self._started = time.monotonic()
        self._stdin: IO[bytes] = self.process.stdin  # type: ignore[assignment]
        self._stdout: IO[bytes] = self.process.stdout  # type: ignore[assignment]
        # Stdout is read from its descriptor into this buffer, never through the
        # buffered reader, so that waiting on it can also watch the process exit.
        self._pending = bytearray()
        self._heard = False  # a line came on stdout
        self._exited = _exit_watch(self.process.pid)

    def exchange_turn(self, turn: int, user_input: str) -> str:
        line = {"type": "turn", "turn": turn, "user_input": user_input}
        try:
            self._stdin.write(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
            self._stdin.flush()
        except (OSError, ValueError):  # a broken pipe: the agent is gone
            raise self._failure(
                f"turn {turn}: the agent exited before it was sent the turn", ended=True
            ) from None
        raw = self._read_line(turn)
        if not raw:
            raise self._failure(f"turn {turn}: the agent exited before replying", ended=True)
        return self._reply(turn, raw)

    def _read_line(self, turn: int) -> bytes:
        """The next line on stdout; ``b""`` once the agent exited (or closed stdout)
        without finishing one. Raises :class:`RunError` past the first-reply limit."""
        poller = select.poll()
        try:
            stdout = self._stdout.fileno()
        except (OSError, ValueError):  # closed under us: the case was abandoned
            return b""
        poller.register(stdout, select.POLLIN)
        if self._exited is not None:
            poller.register(self._exited, select.POLLIN)
        while True:
            newline = self._pending.find(b"\n")
            if newline >= 0 or len(self._pending) >= MAX_LINE_BYTES:
                end = newline + 1 if newline >= 0 else MAX_LINE_BYTES
                line = bytes(self._pending[:end])
                del self._pending[:end]
                self._heard = True
                return line
            timeout = self._silence_left(turn)
            if self._exited is None:  # no exit signal here: look again now and then
                timeout = EXIT_POLL_S if timeout is None else min(timeout, EXIT_POLL_S)
            try:
                ready = {fd for fd, _ in poller.poll(None if timeout is None else timeout * 1000)}
            except InterruptedError:  # pragma: no cover - PEP 475 retries it
                continue
            if stdout in ready:
                if not self._take(stdout):
                    return self._rest()  # end of stdout
            elif self._gone(ready):
                # The process is gone; whatever it printed is in the pipe already.
                # Something it started may still hold stdout open: do not wait for it.
                while self._readable(stdout) and self._take(stdout):
                    pass
                if self._pending.find(b"\n") >= 0:
                    continue
                return self._rest()

    def _gone(self, ready: set[int]) -> bool:
        """Whether the agent process has exited, by its exit signal in ``ready`` or a look."""
        if self._exited is not None:
            return self._exited in ready
        return self.process.poll() is not None

    def _take(self, stdout: int) -> bool:
        """Read what stdout has into the buffer; false at its end."""
        try:
            chunk = os.read(stdout, 65536)
        except OSError:
            return False
        self._pending += chunk
        return bool(chunk)

    @staticmethod
    def _readable(stdout: int) -> bool:
        ready, _, _ = select.select([stdout], [], [], 0)
        return bool(ready)

    def _rest(self) -> bytes:
        """What is left of stdout, an unfinished line: all of it, once."""
        rest = bytes(self._pending)
        self._pending.clear()
        return rest

    def _silence_left(self, turn: int) -> float | None:
        """Seconds until the first-reply limit, while the agent has said nothing yet
        (``None`` once it has). Raises :class:`RunError` when the limit has passed."""
        if self._heard or self._exchanges:
            return None
        limit = self._agent.first_reply_timeout_s
        left = self._started + limit - time.monotonic()
        if left > 0:
            return left
        raise self._failure(
            f"turn {turn}: the agent sent no reply and no model request within "
            f"first_reply_timeout_s={limit:g} s of starting"
        )

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
        extra = bytes(self._pending)
        with suppress(OSError, ValueError):
            while len(extra) <= QUOTE_CHARS and self._readable(self._stdout.fileno()):
                chunk = os.read(self._stdout.fileno(), QUOTE_CHARS + 1)
                if not chunk:
                    break
                extra += chunk
        if extra.strip():
            raise self._failure(f"the agent printed {_quote(extra)} on stdout after its last reply")

    def release(self) -> None:
        """Kill the process group and reap the process; from any thread, idempotent."""
        self._kill()
        if threading.current_thread() is self._owner:
            for stream in (self._stdin, self._stdout, self._stderr):
                with suppress(OSError, ValueError):
                    stream.close()
            if self._exited is not None:
                with suppress(OSError):
                    os.close(self._exited)
                self._exited = None

    def diagnostics(self) -> str:
        return self._stderr_note()

    def _kill(self) -> None:
        with self._lock:
            # The group may outlive its leader (a child it spawned): kill it whatever
            # the leader's state, then reap the leader; then whatever left the group.
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            with suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
            # Once the leader is gone, one sweep kills the rest for good: nothing is
            # left to start another (finish, then release, would sweep twice).
            if not self._swept:
                self._mark.sweep()
                self._swept = self.process.returncode is not None

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
        # What the agent said (an error message, a line on stdout) is quoted too.
        return RunError(self._secrets.text(f"{message}{how}; {self._stderr_note()}"))

    def _stderr_note(self) -> str:
        tail = self._stderr_tail()
        return f"its stderr ends: {tail}" if tail else "its stderr is empty"

    def _stderr_tail(self) -> str:
        # pread: no shared file position, so another thread (the runner quoting an
        # abandoned case) may read it while this session's own thread does.
        try:
            descriptor = self._stderr.fileno()
            size = os.fstat(descriptor).st_size
            start = max(0, size - STDERR_TAIL_CHARS * 4)
            text = os.pread(descriptor, size - start, start).decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        if start > 0:  # the first line read is a line's end: a key there would be cut
            text = text.partition("\n")[2]
        # Redacted before it is cut: a cut must not keep half of the provider's key.
        text = self._secrets.text(text)
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        tail = " | ".join(lines)
        return tail if len(tail) <= STDERR_TAIL_CHARS else "..." + tail[-STDERR_TAIL_CHARS:]


def _exit_watch(pid: int) -> int | None:
    """A descriptor that becomes readable when process ``pid`` exits (Linux), else ``None``."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


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
