"""A signal at any moment of a run leaves every report whole, or not written and said
so on stderr, and the exit code non-zero: a real ``zeroclaw`` subprocess, its stdout a
pipe read slowly (or not at all), a ``--report`` file, and a real SIGTERM or SIGINT.

Before: SIGTERM while stdout was written cut the JSON at the pipe's 64 KiB, the
``--report`` file was never written, stderr was empty, and the process died by the
signal (143)."""

from __future__ import annotations

import array
import fcntl
import json
import os
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from zeroclaw_eval.run.signals import REPORT_GRACE_S

from .conftest import ZEROCLAW

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pipes")

#: Cases in the suite: a JSON report of about 500 kB, many times a pipe's buffer.
CASES = 400


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("signals") / "suite"
    directory.mkdir()
    for index in range(CASES):
        case = {
            "model_name": f"case-{index:03}-" + "n" * 100,
            "turns": [
                {
                    "user_input": "hi",
                    "steps": [{"response": {"type": "text", "content": "hello there"}}],
                }
            ],
            "expects": {"response_contains": ["hello"]},
        }
        (directory / f"c{index:03}.json").write_text(json.dumps(case), encoding="utf-8")
    return directory


class Run:
    """``zeroclaw eval run --format json --report json:report.json``, its stdout a pipe
    this test reads as slowly as it likes."""

    def __init__(self, directory: Path, suite: Path, *extra: str) -> None:
        self.directory = directory
        self.report = directory / "report.json"
        report = ["--report", f"json:{self.report}"]
        self.process = subprocess.Popen(
            [
                str(ZEROCLAW),
                "eval",
                "run",
                "--suite",
                str(suite),
                "--format",
                "json",
                *report,
                *extra,
            ],
            cwd=directory,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        self.stdout = self.process.stdout.fileno()
        self.read = bytearray()

    def pending(self) -> int:
        """Bytes written to the pipe and not read yet."""
        held = array.array("i", [0])
        fcntl.ioctl(self.stdout, termios.FIONREAD, held)
        return held[0]

    def wait_until_stdout_blocks(self) -> None:
        """Until the harness is blocked writing stdout: the pipe full, and staying so."""
        deadline = time.monotonic() + 60
        last, steady = -1, 0
        while steady < 4:
            assert time.monotonic() < deadline and self.process.poll() is None
            now = self.pending()
            steady = steady + 1 if now == last and now > 0 else 0
            last = now
            time.sleep(0.05)

    def read_slowly(self, size: int = 4096, pause_s: float = 0.002) -> None:
        """Read stdout to its end, ``size`` bytes at a time."""
        while chunk := os.read(self.stdout, size):
            self.read += chunk
            time.sleep(pause_s)

    def read_until(self, count: int) -> None:
        while len(self.read) < count:
            chunk = os.read(self.stdout, 4096)
            assert chunk
            self.read += chunk

    def finish(self) -> tuple[int, str]:
        self.read_slowly(65536, 0)
        assert self.process.stderr is not None
        stderr = self.process.stderr.read().decode()
        return self.process.wait(timeout=60), stderr


def whole_json(data: bytes | str) -> dict[str, object]:
    document: dict[str, object] = json.loads(data)
    assert document["total"] == CASES
    return document


def test_sigterm_while_stdout_is_blocked_writes_every_report_whole_and_says_so(
    tmp_path: Path, suite: Path
) -> None:
    run = Run(tmp_path, suite, "--no-history")
    run.wait_until_stdout_blocks()  # 64 KiB sent, the rest waiting on this reader
    run.process.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    run.read_slowly()
    code, stderr = run.finish()

    assert code == 143
    assert whole_json(run.read)["all_passed"] is True  # every case ran and passed
    assert whole_json(run.report.read_text(encoding="utf-8"))["all_passed"] is True
    assert stderr == (
        "Error: interrupted by SIGTERM while the reports were written: each was written "
        f"whole (json:{run.report}, stdout)\n"
    )


def test_sigint_while_a_slow_reader_is_half_way_lists_the_history_too(
    tmp_path: Path, suite: Path
) -> None:
    history = tmp_path / "history.sqlite"
    run = Run(tmp_path, suite, "--history", str(history))
    run.read_until(100_000)  # the reader is half way through the document
    run.process.send_signal(signal.SIGINT)
    run.read_slowly()
    code, stderr = run.finish()

    assert code == 130
    whole_json(run.read)
    whole_json(run.report.read_text(encoding="utf-8"))
    assert stderr.endswith(f"whole (json:{run.report}, stdout, the history)\n"), stderr
    listed = subprocess.run(
        [str(ZEROCLAW), "eval", "history", "--history", str(history), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert len(json.loads(listed.stdout)["runs"]) == 1


def test_a_second_signal_stops_the_writing_and_says_what_was_not_written(
    tmp_path: Path, suite: Path
) -> None:
    run = Run(tmp_path, suite, "--no-history")
    run.wait_until_stdout_blocks()
    run.process.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    run.process.send_signal(signal.SIGTERM)  # "now, please"
    code, stderr = run.finish()

    assert code == 143
    assert stderr == (
        "Error: interrupted by SIGTERM while the reports were written, and stopped (a "
        f"second SIGTERM): written whole: json:{run.report}; cut short: stdout\n"
    )
    whole_json(run.report.read_text(encoding="utf-8"))  # the file came first, whole
    with pytest.raises(ValueError):
        json.loads(run.read)  # cut, and said so


def test_a_reader_that_stops_reading_is_given_the_grace_then_left(
    tmp_path: Path, suite: Path
) -> None:
    run = Run(tmp_path, suite, "--no-history")
    run.wait_until_stdout_blocks()
    signalled = time.monotonic()
    run.process.send_signal(signal.SIGTERM)
    # Nobody reads: the harness exits on its own once the grace is out.
    code = run.process.wait(timeout=REPORT_GRACE_S + 30)
    waited = time.monotonic() - signalled
    _, stderr = run.finish()

    assert code == 143 and waited >= REPORT_GRACE_S
    assert stderr.startswith(
        "Error: interrupted by SIGTERM while the reports were written, and stopped "
        f"(not done within {REPORT_GRACE_S:g} s): written whole: json:{run.report}; "
        "cut short: stdout"
    )
    whole_json(run.report.read_text(encoding="utf-8"))


@pytest.mark.parametrize("delay_s", [0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.7, 1.0, 1.5, 2.5])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_a_signal_at_any_moment_leaves_each_report_whole_or_says_it_is_not(
    tmp_path: Path, suite: Path, delay_s: float, signum: int
) -> None:
    """Starting, loading, running, writing the file, writing stdout: wherever the
    signal lands, a report is whole, or stderr names it as not written. Nothing is
    read before the signal, so the run cannot have ended by then (its report is
    many times the pipe's buffer); the reader then reads slowly."""
    run = Run(tmp_path, suite, "--no-history")
    time.sleep(delay_s)
    run.process.send_signal(signum)
    run.read_slowly(4096, 0.005)
    code, stderr = run.finish()

    assert code != 0, stderr
    assert "Traceback" not in stderr
    if code in (-signum, 1):  # before the command answers signals: the interpreter starting
        assert code == -signum or stderr.strip() == "Aborted!", stderr
        assert run.read == b"" and not run.report.exists()
        return
    assert code == 128 + signum, stderr
    name = signal.Signals(signum).name
    if not stderr:  # loading or running: the partial report says it, whole, everywhere
        assert json.loads(run.read)["interrupted"] == name
        assert json.loads(run.report.read_text(encoding="utf-8"))["interrupted"] == name
        return
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    if lines[0].endswith("no report was written"):
        assert run.read == b"" and not run.report.exists()
        return
    unwritten = lines[0].partition("cut short: ")[2] + lines[0].partition("not written: ")[2]
    if "stdout" not in unwritten:
        document = json.loads(run.read)
        assert document["interrupted"] in (None, name)
    if str(run.report) not in unwritten:
        json.loads(run.report.read_text(encoding="utf-8"))


def test_a_signal_once_the_reports_are_written_still_ends_the_run_red() -> None:
    """Before the reports, a signal stops the run (a partial report, or none, said so);
    once they are all written whole, it still ends the run as interrupted."""
    from zeroclaw_eval.run.signals import ReportsInterrupted, RunSignals, SuiteInterrupted

    signals = RunSignals()
    with pytest.raises(SuiteInterrupted) as before:
        signals.handle(signal.SIGTERM, None)
    assert not isinstance(before.value, ReportsInterrupted)
    with signals.writing(["stdout"]) as writing, writing.step("stdout"):
        pass
    with pytest.raises(ReportsInterrupted) as after:
        signals.handle(signal.SIGTERM, None)
    assert after.value.whole and after.value.signum == signal.SIGTERM
    assert str(after.value) == "interrupted by SIGTERM once every report was written whole"


INTERRUPTED_WHILE_IMPORTING = """
import os, signal, sys

class InterruptOnClick:
    # Sends the process SIGINT just as the command line imports click (or the
    # module the test names instead).
    def find_spec(self, name, path=None, target=None):
        if name == "click":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, InterruptOnClick())
sys.argv = ["zeroclaw", "eval", "plugins"]
from zeroclaw_eval.launch import main
main()
"""


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("click", '"plugins"'),  # the command line itself
        ("zeroclaw_eval.cli.run", '"run"'),  # the command's module, found by name
        ("zeroclaw_eval.plugins.manager", '"run", "-p", "no:junit"'),  # an option's
        ("zeroclaw_eval.selection.keyword", '"run", "-k", "x"'),
        ("zeroclaw_eval.selection.shard", '"run", "--shard", "1/2"'),
    ],
    ids=["command-line", "command", "-p", "-k", "--shard"],
)
def test_an_interrupt_while_the_command_line_is_imported_prints_no_traceback(
    module: str, argv: str
) -> None:
    # Before a command answers signals, SIGINT ends the process as its default does:
    # never click's "Aborted!", never a traceback from the middle of an import.
    script = INTERRUPTED_WHILE_IMPORTING.replace('"click"', f'"{module}"').replace(
        '"eval", "plugins"', f'"eval", {argv}'
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (-signal.SIGINT, "", "")


WRAPPED_WHILE_IMPORTING = """
import os, signal, sys, time

class InterruptWrapped:
    # Sends the process SIGINT as {module} is imported, and lets the interrupt out
    # wrapped in a RuntimeError, as Python 3.11 does when it lands in a class's
    # __set_name__ (functools.cached_property's, say).
    def find_spec(self, name, path=None, target=None):
        if name != "{module}":
            return None
        sys.meta_path.remove(self)
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(10)
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__ on 'cached_property'") from exc
        raise AssertionError("the signal was not delivered")

sys.meta_path.insert(0, InterruptWrapped())
sys.argv = ["zeroclaw", "eval", {command}]
from zeroclaw_eval.launch import main
main()
"""


@pytest.mark.parametrize(
    ("command", "module", "said"),
    [
        # The run answers signals before it imports the harness: its own line.
        (
            '"run", "--no-history"',
            "zeroclaw_eval.run.session",
            "interrupted by SIGINT while the harness and its plugins loaded: no report was written",
        ),
        # Any other command: the console script knows the interrupt behind the error.
        ('"plugins"', "zeroclaw_eval.plugins.manager", "interrupted by SIGINT"),
    ],
    ids=["run", "plugins"],
)
def test_an_interrupt_wrapped_in_another_error_while_importing_is_the_interrupt(
    command: str, module: str, said: str
) -> None:
    """A Ctrl-C that lands while a command imports the harness and comes out as a
    RuntimeError is still an interrupt: one line, exit 130, no traceback, no report."""
    script = WRAPPED_WHILE_IMPORTING.replace("{module}", module).replace("{command}", command)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        128 + signal.SIGINT,
        "",
        f"Error: {said}\n",
    )


def test_an_error_not_raised_by_an_interrupt_is_not_one() -> None:
    from zeroclaw_eval.launch import interrupt_behind

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ValueError("while handling it") from None
    except ValueError as suppressed:
        assert interrupt_behind(suppressed) is None  # `from None`: the user said it is not
    plain = RuntimeError("nothing behind it")
    assert interrupt_behind(plain) is None
    looped = RuntimeError("a")
    looped.__context__ = RuntimeError("b")
    looped.__context__.__context__ = looped
    assert interrupt_behind(looped) is None
    interrupted = KeyboardInterrupt()
    wrapped = RuntimeError("wrapped")
    wrapped.__context__ = OSError("between")
    wrapped.__context__.__cause__ = interrupted
    assert interrupt_behind(wrapped) is interrupted


def test_the_console_script_lets_a_real_error_through_and_names_a_wrapped_signal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error no interrupt is behind is not swallowed (never an exit 0 after a
    crash); one a SIGTERM is behind exits 143, naming SIGTERM."""
    import zeroclaw_eval.cli
    from zeroclaw_eval.launch import main
    from zeroclaw_eval.run.signals import SuiteInterrupted

    def crashing() -> None:
        raise ValueError("a real bug")

    monkeypatch.setattr(zeroclaw_eval.cli, "main", crashing)
    with pytest.raises(ValueError, match="a real bug"):
        main()

    def wrapped_sigterm() -> None:
        try:
            raise SuiteInterrupted(signal.SIGTERM)
        except SuiteInterrupted as exc:
            raise RuntimeError("Error calling __set_name__") from exc

    monkeypatch.setattr(zeroclaw_eval.cli, "main", wrapped_sigterm)
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 128 + signal.SIGTERM
    assert capsys.readouterr().err == "Error: interrupted by SIGTERM\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
