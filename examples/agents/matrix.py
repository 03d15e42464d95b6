"""The conformance matrix: every agent stack of ``examples/agents/``, honest and broken.

Each stack directory with a ``matrix.toml`` is one real agent on one framework, run
through the real CLI from the stack's own environment. Its ``matrix.toml`` names
the environment and says, for each configuration, what the run must come to:

    env = "smolagents"          # .matrix/<env>: a venv from the stack's requirements.txt
                                # ("node": npm ci in the stack, the project's own venv)
    [[run]]
    config = "served.toml"
    passes = true
    [[run]]
    config = "lying.toml"
    fails = [{check = "served_tools: results sent back", detail = "ok, done"}]

A passing run exits 0 with every case passed. A failing run exits 1 with no run
error, and the checks that fail are exactly those listed (by title), each with a
detail holding the listed text: a broken variant goes red for its own reason, and
for nothing else.

    python examples/agents/matrix.py install [STACK...]   # make the environments
    python examples/agents/matrix.py list                 # the stacks and their runs
    python -m pytest examples/agents                      # run the matrix

``install`` makes ``.matrix/<env>`` for each stack named (every stack by default),
with the stack's pinned ``requirements.txt`` and this project (editable), or runs
``npm ci`` for a Node stack. Environments that exist are kept: delete one to remake it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the project's dependency below 3.11
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent
ENVIRONMENTS = PROJECT / ".matrix"

#: The environment of a stack whose agent is a Node program, run by the project's venv.
NODE = "node"


@dataclass(frozen=True)
class Expected:
    """A check a broken variant must fail, and text its detail must hold."""

    check: str
    detail: str


@dataclass(frozen=True)
class Run:
    """One configuration of a stack and what its run must come to."""

    stack: str
    config: Path
    passes: bool
    fails: tuple[Expected, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.stack}/{self.config.stem}"


@dataclass(frozen=True)
class Stack:
    """One agent stack of the matrix."""

    name: str
    directory: Path
    env: str
    runs: tuple[Run, ...] = field(default_factory=tuple)

    @property
    def environment(self) -> Path:
        """The virtual environment the stack's runs use."""
        return PROJECT / ".venv" if self.env == NODE else ENVIRONMENTS / self.env

    @property
    def zeroclaw(self) -> Path:
        return self.environment / "bin" / "zeroclaw"


def stacks() -> list[Stack]:
    """Every stack with a ``matrix.toml``, by name. Raises ``ValueError`` on a malformed one."""
    found = []
    for table in sorted(HERE.glob("*/matrix.toml")):
        data: dict[str, Any] = tomllib.loads(table.read_text(encoding="utf-8"))
        name = table.parent.name
        unknown = set(data) - {"env", "run"}
        if unknown or not isinstance(data.get("env"), str) or not data.get("run"):
            raise ValueError(f"{table}: needs env and [[run]] entries only (found {sorted(data)})")
        runs = []
        for entry in data["run"]:
            config = table.parent / entry["config"]
            if not config.is_file():
                raise ValueError(f"{table}: run.config={entry['config']!r}: no such file")
            fails = tuple(Expected(f["check"], f["detail"]) for f in entry.get("fails", ()))
            if entry.get("passes", False) == bool(fails):
                raise ValueError(f"{table}: {entry['config']}: give passes = true or fails")
            runs.append(Run(name, config, not fails, fails))
        found.append(Stack(name, table.parent, data["env"], tuple(runs)))
    return found


#: Environments made at once: pip mostly waits on downloads and unpacking.
PARALLEL_INSTALLS = 3


def install(names: list[str]) -> None:
    """Make the environments of the stacks named (every one when none is), a few at a
    time; each says when it starts and ends, and a failure stops with its output."""
    chosen = [stack for stack in stacks() if not names or stack.name in names]
    missing = set(names) - {stack.name for stack in chosen}
    if missing:
        raise SystemExit(f"no such stack: {', '.join(sorted(missing))}")
    jobs: dict[str, list[list[str]]] = {}
    where: dict[str, Path] = {}
    for stack in chosen:
        if stack.env == NODE:
            npm = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
            label = f"npm ci in {stack.directory.relative_to(PROJECT)}"
            jobs[label], where[label] = [npm], stack.directory
            continue
        label = f".matrix/{stack.env}"
        if label in jobs or stack.zeroclaw.exists():
            continue
        requirements = stack.directory / "requirements.txt"
        pip = [str(stack.environment / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        jobs[label] = [
            [sys.executable, "-m", "venv", str(stack.environment)],
            [*pip, "-r", str(requirements), "-e", str(PROJECT)],
        ]
        where[label] = PROJECT
    with ThreadPoolExecutor(PARALLEL_INSTALLS) as pool:
        done = {
            label: pool.submit(_make, label, commands, where[label])
            for label, commands in jobs.items()
        }
        failed = [label for label, future in done.items() if not future.result()]
    if failed:
        raise SystemExit(f"matrix: could not make {', '.join(failed)}")


def _make(label: str, commands: list[list[str]], cwd: Path) -> bool:
    """Run ``commands`` in turn; print the output of the first that fails."""
    print(f"matrix: making {label}", flush=True)
    started = time.monotonic()
    for command in commands:
        result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
        if result.returncode != 0:
            print(f"matrix: {label}: {' '.join(command[:4])}... exited {result.returncode}")
            print(result.stdout + result.stderr, flush=True)
            return False
    print(f"matrix: made {label} in {time.monotonic() - started:.0f} s", flush=True)
    return True


def main(argv: list[str]) -> int:
    if argv[:1] == ["install"]:
        install(argv[1:])
        return 0
    if argv == ["list"]:
        for stack in stacks():
            for run in stack.runs:
                outcome = (
                    "passes"
                    if run.passes
                    else "fails: " + ", ".join(expected.check for expected in run.fails)
                )
                print(f"{run.id} ({stack.env}): {outcome}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # `matrix.py list | head`: the reader left, not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
