"""The command line: ``zeroclaw eval run | check | record | plugins | history |
compare | merge | schema | import``, one module per command in this package.

The ``eval`` group imports a command's module only when that command runs (or
when help lists them all): ``zeroclaw eval run`` never imports ``history``.
:mod:`zeroclaw_eval.cli.common` is the one boundary where errors become text:
every :class:`~zeroclaw_eval.errors.ZeroclawEvalError` is printed as
``Error: ...`` on stderr with exit code 1; usage errors exit 2 (click's
convention). Exit code 0 means every case passed, and nothing else.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator, Mapping, MutableMapping

import click

from zeroclaw_eval.cli.common import COLLECTOR_PAUSED, import_before_signals

#: Each command of ``zeroclaw eval``, and where it is defined (``module:function``).
COMMANDS: Mapping[str, str] = {
    "check": "zeroclaw_eval.cli.check:check",
    "compare": "zeroclaw_eval.cli.history:compare",
    "history": "zeroclaw_eval.cli.history:history",
    "import": "zeroclaw_eval.cli.importing:import_traces",
    "merge": "zeroclaw_eval.cli.merge:merge",
    "plugins": "zeroclaw_eval.cli.plugins:plugins",
    "record": "zeroclaw_eval.cli.record:record",
    "run": "zeroclaw_eval.cli.run:run",
    "schema": "zeroclaw_eval.cli.schema:schema",
}


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's commands, each imported the first time it is looked up.

    Click reads a group's commands through this mapping only, so listing them
    costs nothing, and running one imports that one alone.
    """

    def __init__(self, where: Mapping[str, str]) -> None:
        self._where = dict(where)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is None:
            module, _, attribute = self._where[name].partition(":")
            command = getattr(import_before_signals(module), attribute)
            self._loaded[name] = command
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._where[name] = ""
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._where[name]
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(None, "-V", "--version", package_name="zeroclaw-eval")
@click.pass_context
def main(ctx: click.Context) -> None:
    """zeroclaw: tools for the zeroclaw agent loop."""
    # No cyclic garbage collection until the suite is admitted: see
    # common.collector_resumed. Put back when the command ends, for in-process
    # invocations.
    if gc.isenabled():
        gc.disable()
        ctx.meta[COLLECTOR_PAUSED] = True
        ctx.call_on_close(gc.enable)
    _skip_the_last_collection()


def _skip_the_last_collection() -> None:
    """Freeze every object at exit, so that the interpreter's last collection skips them.

    A run ends with its reports, checks and history rows alive, and the
    interpreter collects once more at exit, over all of them (W3: 20 ms), though
    the process's memory goes back to the system whole a moment later. Registered
    once per process; in-process invocations (tests) are left as they are.
    """
    global _FREEZE_AT_EXIT
    if not _FREEZE_AT_EXIT:
        _FREEZE_AT_EXIT = True
        atexit.register(gc.freeze)


_FREEZE_AT_EXIT = False


eval_group = click.Group(
    name="eval",
    commands=LazyCommands(COMMANDS),
    help="Replay agent-loop fixtures and gate CI on their expectations.",
)
main.add_command(eval_group)
