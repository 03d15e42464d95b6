"""Mutation testing of the modules that decide a verdict: would the tests notice?

Each mutant is one small change to one module (``<`` for ``<=``, an operand of an
``and`` dropped, a field constraint removed, a ``raise`` turned into ``pass``...).
A mutant is *killed* when the module's tests fail against it, and *survives* when
they stay green: a survivor is a decision no test pins.

The mutants are made from the syntax tree, so they reach what a bytecode-level
tool cannot: ``@property`` bodies, class-level pydantic field declarations and
their constraints (``Field(min_length=1)``, ``NonNegativeInt``). Each is run as
a real ``pytest`` process whose ``PYTHONPATH`` puts a private copy of the package
(with the one module changed) before the installed one, so the tests that start
the ``zeroclaw`` console script as a subprocess run the mutant too. No process
is forked from a process with threads, which is what makes fork-based tools hang
on the regex helper's worker threads.

What is scored, with which tests, is the ``[tool.mutate]`` table of
``pyproject.toml``; mutants known to be equivalent (no test can tell them from
the original) are listed with the reason in the file it names. Run::

    .venv/bin/python tools/mutate.py                 # every target, 2 jobs
    .venv/bin/python tools/mutate.py --list          # the mutants, not run
    .venv/bin/python tools/mutate.py --target builtin/response.py --jobs 1

Exit status: 0 when no non-equivalent mutant survived, 1 otherwise, 2 when the
configuration or the unmutated tests are broken.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the tool runs where the project's tests run
    import tomli as tomllib

PROJECT = Path(__file__).resolve().parent.parent
PACKAGE = "zeroclaw_eval"

#: Names whose replacement drops a constraint or flips a quantifier.
NAME_SWAPS = {
    "NonEmptyStr": "str",
    "NonNegativeInt": "int",
    "all": "any",
    "any": "all",
    "min": "max",
    "max": "min",
}
COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
BINARY_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.Div,
    ast.Pow: ast.Mult,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
}


# --- making mutants ------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """One change to one module: the byte span replaced, and by what."""

    module: str  # relative to the package: "builtin/response.py"
    scope: str  # the enclosing function or class: "SuiteReport.exit_code"
    line: int
    start: int  # byte offsets into the module's source
    end: int
    replacement: str
    label: str  # "at < 0 -> at <= 0"
    id: str = ""  # module::scope::label, with #n when the label repeats in the scope

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.replacement.encode() + source[self.end :]


def _snippet(node: ast.AST) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 70 else text[:67] + "..."


class _Finder:
    """Walks one module and proposes every mutant of it."""

    def __init__(self, module: str, source: bytes) -> None:
        self.module = module
        self.source = source
        self.tree = ast.parse(source)
        self.line_starts = [0]
        for line in source.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))
        self.found: list[Mutant] = []

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    def propose(self, node: ast.AST, scope: str, replacement: str, label: str) -> None:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        self.found.append(
            Mutant(self.module, scope, node.lineno, start, end, replacement, label)  # type: ignore[attr-defined]
        )

    def expression(self, node: ast.expr, new: ast.expr, scope: str) -> None:
        text = ast.unparse(new)
        self.propose(node, scope, f"({text})", f"{_snippet(node)} -> {_snippet(new)}")

    def run(self) -> list[Mutant]:
        self.visit_body(self.tree.body, "<module>")
        return self.found

    def visit_body(self, body: list[ast.stmt], scope: str) -> None:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        for statement in body:
            self.visit_statement(statement, scope)

    def visit_statement(self, node: ast.stmt, scope: str) -> None:
        inner = scope if scope != "<module>" else ""
        if isinstance(node, ast.Import | ast.ImportFrom):
            return
        if isinstance(node, ast.If) and _names_type_checking(node.test):
            return
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # an attribute's docstring
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            # Annotations are strings (``from __future__ import annotations``) and
            # decorators are structure, not decisions: only defaults and the body.
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                if default is not None:
                    self.visit_expression(default, scope)
            self.visit_body(node.body, f"{inner}.{node.name}".lstrip("."))
            return
        if isinstance(node, ast.ClassDef):
            self.visit_body(node.body, f"{inner}.{node.name}".lstrip("."))
            return
        if isinstance(node, ast.AnnAssign):
            # In a class body the annotation is the field's type (pydantic reads it).
            self.visit_expression(node.annotation, scope, in_type=True)
            if node.value is not None:
                self.visit_expression(node.value, scope)
            return
        yields = isinstance(node, ast.Expr) and isinstance(node.value, ast.Yield | ast.YieldFrom)
        if isinstance(node, ast.Raise) or yields:
            self.propose(node, scope, "pass", f"{_snippet(node)} -> pass")
        elif isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                self.propose(node, scope, "return None", f"{_snippet(node)} -> return None")
        elif isinstance(node, ast.Break):
            self.propose(node, scope, "continue", "break -> continue")
        elif isinstance(node, ast.Continue):
            self.propose(node, scope, "break", "continue -> break")
        elif isinstance(node, ast.AugAssign):
            swapped = BINARY_SWAPS.get(type(node.op))
            if swapped is not None:
                new = ast.AugAssign(node.target, swapped(), node.value)
                self.propose(node, scope, ast.unparse(new), f"{_snippet(node)} -> {_snippet(new)}")
            plain = ast.Assign([node.target], node.value, lineno=0)
            self.propose(node, scope, ast.unparse(plain), f"{_snippet(node)} -> {_snippet(plain)}")
        if isinstance(node, ast.If | ast.While) and not _has_operator(node.test):
            self.expression(node.test, ast.UnaryOp(ast.Not(), node.test), scope)
        for child_field, value in ast.iter_fields(node):
            if child_field == "test" and isinstance(node, ast.If | ast.While):
                self.visit_expression(value, scope)
            elif isinstance(value, list):
                statements = [v for v in value if isinstance(v, ast.stmt)]
                if statements:
                    for statement in statements:
                        self.visit_statement(statement, scope)
                for item in value:
                    if isinstance(item, ast.expr):
                        self.visit_expression(item, scope)
                    elif isinstance(item, ast.excepthandler | ast.withitem | ast.match_case):
                        for sub in ast.iter_child_nodes(item):
                            if isinstance(sub, ast.expr):
                                self.visit_expression(sub, scope)
                        for statement in getattr(item, "body", []):
                            self.visit_statement(statement, scope)
            elif isinstance(value, ast.expr):
                self.visit_expression(value, scope)

    def visit_expression(self, node: ast.expr, scope: str, in_type: bool = False) -> None:
        """Propose the mutants of ``node`` and of what it contains.

        ``in_type``: ``node`` is a type (an annotation, a subscript's slice), where
        ``X | None`` turned into ``X & None`` only fails the import.
        """
        if isinstance(node, ast.JoinedStr):
            # Inside an f-string positions are unreliable: one mutant for its text.
            for index, part in enumerate(node.values):
                if isinstance(part, ast.Constant):
                    values = list(node.values)
                    values[index] = ast.Constant("XX" + str(part.value))
                    self.expression(node, ast.JoinedStr(values), scope)
                    break
            return
        if isinstance(node, ast.Lambda):
            self.visit_expression(node.body, scope)
            return
        if not (in_type and isinstance(node, ast.BinOp)):
            self.mutate_expression(node, scope)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                typed = in_type or (isinstance(node, ast.Subscript) and child is node.slice)
                self.visit_expression(child, scope, typed)
            elif isinstance(child, ast.comprehension):
                for sub in [child.iter, *child.ifs]:
                    self.visit_expression(sub, scope)
                for condition in child.ifs:
                    if not _has_operator(condition):
                        self.expression(condition, ast.UnaryOp(ast.Not(), condition), scope)
            elif isinstance(child, ast.keyword):
                self.visit_expression(child.value, scope)

    def mutate_expression(self, node: ast.expr, scope: str) -> None:
        if isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                swapped = COMPARE_SWAPS.get(type(op))
                if swapped is not None:
                    ops = list(node.ops)
                    ops[index] = swapped()
                    self.expression(node, ast.Compare(node.left, ops, node.comparators), scope)
        elif isinstance(node, ast.BoolOp):
            other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            self.expression(node, ast.BoolOp(other, node.values), scope)
            for index in range(len(node.values)):
                rest = node.values[:index] + node.values[index + 1 :]
                new = rest[0] if len(rest) == 1 else ast.BoolOp(node.op, rest)
                self.expression(node, new, scope)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
            self.expression(node, node.operand, scope)
        elif isinstance(node, ast.BinOp):
            swapped_op = BINARY_SWAPS.get(type(node.op))
            if swapped_op is not None:
                self.expression(node, ast.BinOp(node.left, swapped_op(), node.right), scope)
        elif isinstance(node, ast.IfExp):
            if not _has_operator(node.test):
                self.expression(node.test, ast.UnaryOp(ast.Not(), node.test), scope)
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                self.expression(node, ast.Constant(not value), scope)
            elif isinstance(value, int | float):
                self.expression(node, ast.Constant(value + 1), scope)
            elif isinstance(value, str):
                self.expression(node, ast.Constant(f"XX{value}XX"), scope)
        elif isinstance(node, ast.Name) and node.id in NAME_SWAPS:
            self.expression(node, ast.Name(NAME_SWAPS[node.id]), scope)
        elif isinstance(node, ast.Call):
            # An optional argument dropped: a default, a constraint, a keyword.
            for index, keyword in enumerate(node.keywords):
                if keyword.arg is not None:
                    keywords = node.keywords[:index] + node.keywords[index + 1 :]
                    self.expression(node, ast.Call(node.func, node.args, keywords), scope)
            # Only where the last positional argument is an optional default:
            # dropping a required one only makes a TypeError.
            if _takes_default(node.func) and len(node.args) >= 2:
                self.expression(node, ast.Call(node.func, node.args[:-1], node.keywords), scope)


def _takes_default(func: ast.expr) -> bool:
    """``getattr(o, name, default)``, ``next(it, default)``, ``d.get(key, default)``."""
    if isinstance(func, ast.Name):
        return func.id in ("getattr", "next")
    return isinstance(func, ast.Attribute) and func.attr in ("get", "pop")


def _has_operator(test: ast.expr) -> bool:
    """Whether a condition already gets its own mutants (a comparison, ``not``, ``and``)."""
    return isinstance(test, ast.Compare | ast.BoolOp) or (
        isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    )


def _names_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def mutants_of(module: str, source: bytes, only: Sequence[str] = ()) -> list[Mutant]:
    """Every valid mutant of one module, in source order, with a stable ``id``.

    ``only`` limits them to the named scopes (``SuiteReport.exit_code``) and what
    they enclose. A proposal whose text does not compile, or compiles to the
    same code, is dropped.
    """
    original = ast.dump(ast.parse(source))
    kept: list[Mutant] = []
    seen: dict[str, int] = {}
    for mutant in sorted(_Finder(module, source).run(), key=lambda m: (m.start, m.end, m.label)):
        if only and not any(mutant.scope == s or mutant.scope.startswith(s + ".") for s in only):
            continue
        try:
            changed = ast.dump(ast.parse(mutant.apply(source)))
        except SyntaxError:
            continue
        if changed == original:
            continue
        key = f"{module}::{mutant.scope}::{mutant.label}"
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key = f"{key}#{seen[key]}"
        kept.append(Mutant(**{**mutant.__dict__, "id": key}))
    return kept


# --- configuration -------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    module: str
    tests: tuple[str, ...]
    only: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settings:
    targets: tuple[Target, ...]
    equivalents: dict[str, str]
    equivalents_file: Path
    timeout_factor: float


def load_settings(project: Path = PROJECT) -> Settings:
    """The ``[tool.mutate]`` table: the targets, their tests, the equivalents file."""
    with open(project / "pyproject.toml", "rb") as handle:
        table = tomllib.load(handle)["tool"]["mutate"]
    common = tuple(table.get("tests", ()))
    targets = tuple(
        Target(
            entry["module"],
            tuple(dict.fromkeys([*entry.get("tests", ()), *common])),
            tuple(entry.get("only", ())),
        )
        for entry in table["target"]
    )
    equivalents_file = project / table["equivalents"]
    with open(equivalents_file, "rb") as handle:
        equivalents = {key: str(value) for key, value in tomllib.load(handle).items()}
    return Settings(targets, equivalents, equivalents_file, float(table["timeout_factor"]))


# --- running ---------------------------------------------------------------------------


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # killed, survived, timeout, equivalent, error
    seconds: float = 0.0
    output: str = ""


@dataclass
class Workspace:
    """A private copy of the package one job mutates, file by file."""

    root: Path
    package: Path = field(init=False)

    def __post_init__(self) -> None:
        self.package = self.root / PACKAGE
        shutil.copytree(
            PROJECT / "src" / PACKAGE,
            self.package,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(self.root), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        return env

    def write(self, module: str, source: bytes) -> None:
        path = self.package / module
        path.write_bytes(source)
        # The stale bytecode of the last mutant may have the same size and second.
        for cached in (path.parent / "__pycache__").glob(path.stem + ".*.pyc"):
            cached.unlink()


#: The pytest process groups running now: stopped if the tool itself is stopped.
_RUNNING: set[int] = set()


def _stop_running() -> None:
    for pid in list(_RUNNING):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def _on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # through the finally that stops the tests


def run_tests(workspace: Workspace, tests: Sequence[str], timeout: float) -> tuple[str, float, str]:
    """``pytest -x`` over ``tests`` in the workspace: (passed|failed|timeout, seconds, output)."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        # Plugins the tests do not use: each costs start-up time in every run.
        *("-p", "no:xdist", "-p", "no:xdist.looponfail", "-p", "no:anyio"),
        *("-p", "no:zeroclaw_eval", "-p", "no:hypothesispytest"),
        *tests,
    ]
    started = time.monotonic()
    with subprocess.Popen(
        command,
        cwd=PROJECT,
        env=workspace.environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # the whole group is stopped on a timeout
    ) as process:
        _RUNNING.add(process.pid)
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            return "timeout", time.monotonic() - started, output
        finally:
            _RUNNING.discard(process.pid)
    elapsed = time.monotonic() - started
    if process.returncode == 0:
        return "passed", elapsed, output
    # Tests failed (1), could not be collected (2), or pytest itself broke on the
    # mutant (3: an internal error; 4: a conftest that no longer imports). The same
    # command passed unmutated, so it is the mutant that made it fail.
    if process.returncode in (1, 2, 3, 4):
        return "failed", elapsed, output
    return f"error (pytest exit {process.returncode})", elapsed, output


def check_workspace(workspace: Workspace) -> None:
    """The copy must be what a subprocess of the tests imports, or nothing is measured."""
    found = subprocess.run(
        [sys.executable, "-c", f"import {PACKAGE}; print({PACKAGE}.__file__)"],
        env=workspace.environment(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(found).is_relative_to(workspace.root):
        raise SystemExit(f"mutate: {PACKAGE} is imported from {found}, not the mutated copy")


class Pool:
    """Workspaces handed out to the jobs, one per job at a time."""

    def __init__(self, root: Path, jobs: int) -> None:
        self.free = [Workspace(root / f"job{n}") for n in range(jobs)]
        self.lock = threading.Lock()

    def take(self) -> Workspace:
        with self.lock:
            return self.free.pop()

    def give(self, workspace: Workspace) -> None:
        with self.lock:
            self.free.append(workspace)


def run_mutant(pool: Pool, mutant: Mutant, target: Target, timeout: float) -> Outcome:
    original = (PROJECT / "src" / PACKAGE / mutant.module).read_bytes()
    workspace = pool.take()
    try:
        workspace.write(mutant.module, mutant.apply(original))
        result, seconds, output = run_tests(workspace, target.tests, timeout)
    finally:
        workspace.write(mutant.module, original)
        pool.give(workspace)
    status = {"failed": "killed", "passed": "survived", "timeout": "timeout"}.get(result, "error")
    return Outcome(mutant, status, seconds, output if status != "killed" else "")


def diff_line(mutant: Mutant, source: bytes) -> str:
    line_start = source.rfind(b"\n", 0, mutant.start) + 1
    line_end = source.find(b"\n", mutant.end)
    before = source[line_start : line_end if line_end >= 0 else None].decode()
    after = mutant.apply(source)[
        line_start : (line_end + len(mutant.replacement.encode()) - (mutant.end - mutant.start))
        if line_end >= 0
        else None
    ].decode()
    return f"    - {before.strip()}\n    + {after.strip()}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", action="append", default=[], help="a module to score")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--id", action="append", default=[], help="run only this mutant id")
    parser.add_argument("--json", type=Path, help="write every outcome to this file")
    args = parser.parse_args(argv)

    settings = load_settings()
    targets = [t for t in settings.targets if not args.target or t.module in args.target]
    if args.target and len(targets) != len(set(args.target)):
        print(f"mutate: unknown target in {args.target}", file=sys.stderr)
        return 2
    plan: list[tuple[Target, Mutant]] = []
    for target in targets:
        source = (PROJECT / "src" / PACKAGE / target.module).read_bytes()
        for mutant in mutants_of(target.module, source, target.only):
            if not args.id or mutant.id in args.id:
                plan.append((target, mutant))
    known = {mutant.id for _, mutant in plan}
    stale = [
        key
        for key in settings.equivalents
        if key.split("::")[0] in {t.module for t in targets} and key not in known and not args.id
    ]
    if args.list:
        for _, mutant in plan:
            mark = "  (equivalent)" if mutant.id in settings.equivalents else ""
            print(f"{mutant.id}  [line {mutant.line}]{mark}")
        print(f"{len(plan)} mutants", file=sys.stderr)
        return 0

    started = time.monotonic()
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _run(args, settings, targets, plan, stale, started)
    finally:
        _stop_running()


def _run(
    args: argparse.Namespace,
    settings: Settings,
    targets: Sequence[Target],
    plan: Sequence[tuple[Target, Mutant]],
    stale: Sequence[str],
    started: float,
) -> int:
    with tempfile.TemporaryDirectory(prefix="mutate-") as scratch:
        pool = Pool(Path(scratch), max(1, args.jobs))
        check_workspace(pool.free[0])
        timeouts: dict[str, float] = {}
        for target in targets:  # the unmutated tests must pass, and set the time limit
            workspace = pool.take()
            result, seconds, output = run_tests(workspace, target.tests, 600)
            pool.give(workspace)
            if result != "passed":
                print(output[-4000:], file=sys.stderr)
                print(f"mutate: the tests of {target.module} fail unmutated", file=sys.stderr)
                return 2
            timeouts[target.module] = seconds * settings.timeout_factor + 10
            print(f"baseline {target.module}: {seconds:.1f} s", flush=True)

        outcomes: list[Outcome] = []
        todo = []
        for target, mutant in plan:
            if mutant.id in settings.equivalents:
                outcomes.append(Outcome(mutant, "equivalent"))
            else:
                todo.append((target, mutant))
        with ThreadPoolExecutor(max(1, args.jobs)) as executor:
            futures = [executor.submit(run_mutant, pool, m, t, timeouts[t.module]) for t, m in todo]
            for number, future in enumerate(futures, 1):
                outcome = future.result()
                outcomes.append(outcome)
                if outcome.status not in ("killed", "timeout"):
                    print(f"[{number}/{len(todo)}] {outcome.status}: {outcome.mutant.id}")
                elif number % 50 == 0:
                    print(f"[{number}/{len(todo)}] {time.monotonic() - started:.0f} s")
                sys.stdout.flush()
    wall = time.monotonic() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return report(targets, outcomes, wall, usage.ru_utime + usage.ru_stime, stale, args.json)


def report(
    targets: Sequence[Target],
    outcomes: Sequence[Outcome],
    wall: float,
    cpu: float,
    stale: Sequence[str],
    json_path: Path | None,
) -> int:
    rows = []
    header = ("module", "mutants", "killed", "survived", "equivalent", "score")
    totals = {"mutants": 0, "killed": 0, "survived": 0, "equivalent": 0}
    for target in targets:
        mine = [o for o in outcomes if o.mutant.module == target.module]
        killed = sum(o.status in ("killed", "timeout") for o in mine)
        equivalent = sum(o.status == "equivalent" for o in mine)
        survived = len(mine) - killed - equivalent
        counts = {
            "mutants": len(mine),
            "killed": killed,
            "survived": survived,
            "equivalent": equivalent,
        }
        for key, value in counts.items():
            totals[key] += value
        name = target.module + (f" ({len(target.only)} functions)" if target.only else "")
        rows.append((name, *map(str, counts.values()), _score(killed, survived)))
    rows.append(("total", *map(str, totals.values()), _score(totals["killed"], totals["survived"])))
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    print()
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    for target in targets:
        if target.only:
            print(f"\n{target.module}: only {', '.join(target.only)}")
    # The machine may be shared: the CPU time the tests took says what the run
    # costs on its own, whatever else was running beside it.
    print(f"\nwall time: {wall / 60:.1f} min; CPU time of the test runs: {cpu / 60:.1f} min")
    left = [o for o in outcomes if o.status not in ("killed", "timeout", "equivalent")]
    sources = {t.module: (PROJECT / "src" / PACKAGE / t.module).read_bytes() for t in targets}
    for outcome in left:
        print(f"\n{outcome.status}: {outcome.mutant.id}  [line {outcome.mutant.line}]")
        print(diff_line(outcome.mutant, sources[outcome.mutant.module]))
        if outcome.status.startswith("error"):
            print(outcome.output[-2000:])
    for key in stale:
        print(f"\nno longer a mutant (remove it from the equivalents file): {key}")
    if json_path is not None:
        json_path.write_text(
            json.dumps(
                [
                    {
                        "id": o.mutant.id,
                        "line": o.mutant.line,
                        "status": o.status,
                        "seconds": round(o.seconds, 2),
                    }
                    for o in outcomes
                ],
                indent=1,
            )
            + "\n"
        )
    return 1 if left else 0


def _score(killed: int, survived: int) -> str:
    total = killed + survived
    return f"{100 * killed / total:.1f} %" if total else "-"


if __name__ == "__main__":
    sys.exit(main())
