"""What every command of ``zeroclaw eval`` shares: the error boundary, stdout, the
shared options, and opening the run session.

The commands (one module each in this package) import only this module from the
CLI, and the harness itself inside their bodies: ``zeroclaw --help`` and usage
errors answer without paying for pydantic and the plugins.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from zeroclaw_eval.plugins.manager import PluginManager
    from zeroclaw_eval.run.session import Session

F = TypeVar("F", bound=Callable[..., Any])

COLLECTOR_PAUSED = "zeroclaw_eval.collector_paused"
"""Set in ``ctx.meta`` when the ``zeroclaw`` group paused the cyclic collector."""

CONFIG_HELP = (
    "TOML file with an [eval] table (default: the nearest zeroclaw.toml, or pyproject.toml "
    "with [tool.zeroclaw.eval], in this directory or above)."
)


def import_before_signals(name: str) -> ModuleType:
    """Import ``name`` while no command answers signals yet: with SIGINT at its
    default, as the console script imports the command line (:mod:`zeroclaw_eval.launch`).

    Options are parsed, and a command's module found, before its body answers
    SIGINT and SIGTERM; an import there (the plugin manager, for ``-p``) takes tens
    of milliseconds. Python's handler would raise KeyboardInterrupt in the middle of
    it, and one landing in a class's ``__set_name__`` comes out as a RuntimeError.
    A signal then ends the process as SIGTERM already does, printing nothing.
    Where a handler other than Python's is installed (a command's, a test's), or
    off the main thread, it is left alone.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        return importlib.import_module(name)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        return importlib.import_module(name)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@contextmanager
def errors_to_exit() -> Iterator[None]:
    """The one boundary where the harness's errors become text.

    Every :class:`~zeroclaw_eval.errors.ZeroclawEvalError` is printed as
    ``Error: ...`` on stderr with exit code 1 (a refused suite: one line per
    refused fixture too); a :class:`~zeroclaw_eval.errors.UsageError` is click's
    usage error (exit 2); Ctrl-C before any report exists exits 130, and a signal
    while the reports were written 128 + its number, with the line saying which
    reports were written whole (:mod:`zeroclaw_eval.run.signals`).
    """
    from zeroclaw_eval.errors import SuiteLoadError, UsageError, ZeroclawEvalError

    try:
        yield
    except KeyboardInterrupt as exc:
        # Before a report could exist (plugins still loading), or while the reports
        # were written: a line, not click's "Aborted!", and the signal's exit code.
        signum = getattr(exc, "signum", signal.SIGINT)
        said = str(exc) if getattr(exc, "message", "") else ""
        click.echo(f"Error: {said or f'interrupted by {signal.Signals(signum).name}'}", err=True)
        sys.exit(128 + signum)
    except UsageError as exc:
        if exc.option is None:
            raise click.UsageError(str(exc)) from None
        raise click.BadParameter(str(exc), param_hint=f"'{exc.option}'") from None
    except ZeroclawEvalError as exc:
        warn(str(exc))
        if isinstance(exc, SuiteLoadError):
            for problem in exc.problems:
                warn(problem)
        sys.exit(1)


def warn(line: str) -> None:
    """An ``Error: ...`` line on stderr that does not stop the command by itself."""
    from zeroclaw_eval.errors import one_line

    click.echo(f"Error: {one_line(line)}", err=True)


def emit(document: str) -> None:
    """Write a report to stdout. Not being able to (stdout closed, full, a broken
    pipe) is a :class:`~zeroclaw_eval.errors.ReportError`: exit 1, never a report
    silently lost."""
    from zeroclaw_eval.errors import ReportError

    stream = sys.stdout
    if stream is None:  # started with stdout closed
        raise ReportError("cannot write the report: stdout is closed")
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is None or stream.isatty():  # a terminal: click knows its quirks
            click.echo(document, nl=False)
        else:
            stream.flush()
            # Text the stream's encoding cannot hold is escaped, not a crash.
            data = memoryview(document.encode(stream.encoding or "utf-8", "backslashreplace"))
            # When the reader goes away mid-write, a buffered write returns the count
            # it managed and drops the rest without raising: write until all of it
            # is taken, so that the next write raises instead.
            while data:
                written = buffer.write(data)
                if not written:
                    raise OSError("stdout took no data")
                data = data[written:]
        stream.flush()
    except OSError as exc:
        _drop_stdout(stream)
        raise ReportError(f"cannot write the report to stdout: {exc.strerror or exc}") from None
    except KeyboardInterrupt:  # a signal stopped the write (see zeroclaw_eval.run.signals)
        _drop_stdout(stream)
        raise


def _drop_stdout(stream: Any) -> None:
    """Point stdout at the null device, so that the interpreter's own flush at exit
    neither fails a second time with a traceback nor waits again on a reader that
    stopped reading."""
    with suppress(OSError, ValueError):  # a stream with no file descriptor
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)


class StdoutKept:
    """Stdout kept for the report while the cases run: anything else written there (an
    in-process agent's ``print``, a child process it starts) goes to stderr instead,
    so that a machine-readable report on stdout is the document and nothing else.

    Used as a context manager around the run; :meth:`restore` gives stdout back to
    the report before it is written (and leaving the context does it anyway).
    """

    def __init__(self) -> None:
        self._saved: int | None = None
        self._stream = sys.stdout

    def __enter__(self) -> StdoutKept:
        stream = sys.stdout
        if stream is None or stream.isatty() or sys.stderr is None:
            return self  # a person reads a terminal; nothing to keep apart
        try:
            stream.flush()
            descriptor = stream.fileno()
            self._saved = os.dup(descriptor)
            os.dup2(sys.stderr.fileno(), descriptor)
        except (OSError, ValueError):  # a stream with no file descriptor
            self._saved = None
            return self
        sys.stdout = sys.stderr
        return self

    def restore(self) -> None:
        """Give stdout back to the report (idempotent)."""
        if self._saved is None:
            return
        with suppress(OSError, ValueError):
            sys.stderr.flush()
            os.dup2(self._saved, self._stream.fileno())
        with suppress(OSError):
            os.close(self._saved)
        self._saved = None
        sys.stdout = self._stream

    def __exit__(self, *exc: object) -> None:
        self.restore()


def colour_wanted() -> bool:
    """Whether the report on stdout may be coloured: ``NO_COLOR`` (set, not empty)
    says never, ``FORCE_COLOR`` (set, not empty or ``0``) says always, even into a
    pipe (CI logs that render colour); otherwise only a terminal gets colour.
    Report files never do (see ``Formatter.with_colour``)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    stream = sys.stdout
    return stream is not None and stream.isatty() and os.environ.get("TERM") != "dumb"


def progress_line() -> Callable[[int, int, int, str], None] | None:
    """A progress line on stderr when it is a terminal; nothing otherwise (logs, CI, pipes).
    It counts what the runner counts: cases, or the attempts of repeated cases."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int, failures: int, unit: str) -> None:
        end = "\n" if done == total else ""
        units = unit if total == 1 else f"{unit}s"
        sys.stderr.write(f"\r{done}/{total} {units} done, {failures} failed{end}")
        sys.stderr.flush()

    return show


def collector_resumed() -> None:
    """Once a command has admitted its suite: let the cyclic collector run again,
    blind to everything built so far.

    What a command builds before its cases run (pydantic and its models, the
    plugins, the admitted cases) lives until the process exits and is next to no
    garbage, yet the collector traversed it again and again as it grew, and once
    more at exit. So the ``zeroclaw`` group pauses the collector, and here
    ``gc.freeze()`` puts every object alive out of its sight for good before it
    resumes: it collects what running the cases makes (tools and modes may make
    cycles), and nothing else. CPU time (benchmarks/run.py): W1 0.47 -> 0.35 s,
    W4 4.1 -> 2.7 s.
    """
    gc.freeze()
    if click.get_current_context().meta.get(COLLECTOR_PAUSED):
        gc.enable()


class InProcessPlugins:
    """Plugin objects to register for one in-process invocation, passed as click's
    ``obj`` (see :func:`zeroclaw_eval.testing.run_cli`). The command line never sets it.
    """

    __slots__ = ("plugins",)

    def __init__(self, plugins: tuple[object, ...] = ()) -> None:
        self.plugins = plugins


def plugin_manager(blocked: tuple[str, ...]) -> PluginManager:
    """Built-ins, any in-process plugins, then entry points; ``-p no:NAME`` and the
    environment decide what is never imported. A ``-p no:NAME`` that names no
    plugin is warned about: a typo would otherwise block nothing, silently.
    """
    from zeroclaw_eval.plugins.manager import get_plugin_manager

    pm = get_plugin_manager(blocked=blocked, plugins=_in_process())
    _warn_blocking_nothing(pm, blocked)
    return pm


def open_session(config_path: Path | None, blocked: tuple[str, ...]) -> Session:
    """The run session of this command, opened as every front end opens one
    (:meth:`~zeroclaw_eval.run.session.Session.open`): its configuration, then its
    plugins, with any in-process ones; a ``-p no:NAME`` that blocks nothing is
    warned about, as by :func:`plugin_manager`."""
    from zeroclaw_eval.run.session import Session

    session = Session.open(config=config_path, blocked=blocked, plugins=_in_process())
    assert session.pm is not None  # Session.open always loads the plugins
    _warn_blocking_nothing(session.pm, blocked)
    return session


def _warn_blocking_nothing(pm: PluginManager, blocked: tuple[str, ...]) -> None:
    for name in blocked:
        if name not in pm.known_names:
            known = ", ".join(sorted(pm.known_names)) or "none"
            click.echo(
                f"Warning: -p no:{name}: no plugin is named {name!r}, so it blocks nothing "
                f"(plugins: {known})",
                err=True,
            )


def _in_process() -> tuple[object, ...]:
    found = click.get_current_context().find_object(InProcessPlugins)
    return found.plugins if found is not None else ()


# --- options shared by several commands -------------------------------------------


def _blocked(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    if not values:
        return ()
    manager = import_before_signals("zeroclaw_eval.plugins.manager")
    try:
        return tuple(manager.blocked_from_options(values))
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    shard = import_before_signals("zeroclaw_eval.selection.shard")
    try:
        return shard.ShardSpec.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


def _ks(ctx: click.Context, param: click.Parameter, value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        ks = [int(part) for part in value.split(",")]
    except ValueError:
        raise click.BadParameter(
            f"{value!r}: a comma-separated list of whole numbers, e.g. 1,3", ctx, param
        ) from None
    if any(k < 1 for k in ks):
        raise click.BadParameter(f"{value!r}: every k must be at least 1", ctx, param)
    return ks


suite_option = click.option(
    "--suite",
    type=click.Path(path_type=Path),
    default=None,
    help="Suite directory (overrides [eval].suite_dir).",
)
config_option = click.option(
    "--config", "config_path", type=click.Path(path_type=Path), default=None, help=CONFIG_HELP
)
# Spelled as in pytest: ``-p no:NAME`` blocks the plugin NAME before it is imported.
plugin_option = click.option(
    "-p",
    "blocked",
    multiple=True,
    metavar="no:NAME",
    callback=_blocked,
    help="Do not load the plugin NAME (repeatable). Also: ZEROCLAW_EVAL_DISABLE_PLUGINS=a,b; "
    "ZEROCLAW_EVAL_DISABLE_PLUGIN_AUTOLOAD=1 loads built-ins only.",
)
shard_option = click.option(
    "--shard",
    "shard_spec",
    metavar="K/N",
    default=None,
    callback=_shard,
    help="Run only the K-th of N deterministic slices of the cases (1 <= K <= N), for a CI "
    "matrix; balanced by the run history's recorded durations when it has some.",
)


def repeat_and_history_options(command: F) -> F:
    """``--repeat`` / ``--k`` and ``--history PATH`` / ``--no-history``."""
    options = (
        click.option(
            "--repeat",
            "repeat",
            type=click.IntRange(min=1),
            metavar="N",
            default=None,
            help="Run every case N times, each with a fresh agent (overrides [eval].repeats).",
        ),
        click.option(
            "--k",
            "ks",
            default=None,
            metavar="K[,K...]",
            callback=_ks,
            help="The k of pass@k and pass^k in the report (default: 1 and --repeat).",
        ),
        click.option(
            "--history",
            "history",
            type=click.Path(path_type=Path),
            default=None,
            help="Append the run to this SQLite history "
            "(default: .zeroclaw/history.sqlite beside the config file).",
        ),
        click.option("--no-history", is_flag=True, help="Do not record the run in the history."),
    )
    for option in reversed(options):
        command = option(command)
    return command
