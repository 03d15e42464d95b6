"""A plugin whose every object fails on purpose, one way each.

Tools: ``hang`` (blocks forever; first writes the file named by
``ZEROCLAW_FAULTY_MARKER``, if set, so a test knows the suite reached it), ``spin``
(a busy loop that never ends), ``boom`` (raises), ``number`` (returns an int),
``bad_output`` (a ToolResult whose output is not text), ``exit`` (calls
``sys.exit(0)``). Families: ``explodes_when_graded`` and ``hangs_when_graded``
(each grades an empty run normally, so admission accepts them, and fails on a real
run), ``explodes_when_admitted`` (its admission rules raise), ``hangs_when_admitted``
(its admission rules write the ``ZEROCLAW_FAULTY_MARKER`` file, then block),
``swallows_when_admitted`` (the same, and the interrupt that ends the block comes
out as a RuntimeError, as one landing in a class's ``__set_name__`` does). Formatters:
``explode`` (raises) and ``not_text`` (returns None).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from zeroclaw_eval import (
    CheckResult,
    Family,
    Formatter,
    Problem,
    RunRecord,
    SuiteReport,
    ToolResult,
    hookimpl,
)


class _Tool:
    name = ""
    description = "fails on purpose"
    parameters: Mapping[str, Any] = {"type": "object"}

    def run(self, arguments: dict[str, Any]) -> Any:
        raise NotImplementedError


class Hang(_Tool):
    name = "hang"

    def run(self, arguments: dict[str, Any]) -> Any:
        marker = os.environ.get("ZEROCLAW_FAULTY_MARKER")
        if marker:
            Path(marker).write_text("hanging", encoding="utf-8")
        threading.Event().wait()


class Spin(_Tool):
    name = "spin"

    def run(self, arguments: dict[str, Any]) -> Any:
        while True:
            pass


class Boom(_Tool):
    name = "boom"

    def run(self, arguments: dict[str, Any]) -> Any:
        raise RuntimeError("the boom tool exploded")


class Number(_Tool):
    name = "number"

    def run(self, arguments: dict[str, Any]) -> Any:
        return 42


class BadOutput(_Tool):
    name = "bad_output"

    def run(self, arguments: dict[str, Any]) -> Any:
        return ToolResult(b"bytes, not text")  # type: ignore[arg-type]


class Exit(_Tool):
    name = "exit"

    def run(self, arguments: dict[str, Any]) -> Any:
        sys.exit(0)


class ExplodesWhenGraded(Family[bool]):
    name = "explodes_when_graded"
    params = bool

    def grade(self, params: bool, run: RunRecord) -> list[CheckResult]:
        if run.final_response is None:  # the empty run of admission and `eval check`
            return [CheckResult(self.name, False, "nothing ran")]
        raise ValueError("a bug in the grader")


class HangsWhenGraded(Family[bool]):
    name = "hangs_when_graded"
    params = bool

    def grade(self, params: bool, run: RunRecord) -> list[CheckResult]:
        if run.final_response is None:
            return [CheckResult(self.name, False, "nothing ran")]
        threading.Event().wait()
        raise AssertionError("unreachable")


class ExplodesWhenAdmitted(Family[bool]):
    name = "explodes_when_admitted"
    params = bool

    def rules(self, params: bool, expects: Mapping[str, Any]) -> Iterable[Problem]:
        raise KeyError("a bug in the rules")

    def grade(self, params: bool, run: RunRecord) -> list[CheckResult]:
        return [CheckResult(self.name, False, "never admitted")]


class HangsWhenAdmitted(Family[bool]):
    name = "hangs_when_admitted"
    params = bool

    def rules(self, params: bool, expects: Mapping[str, Any]) -> Iterable[Problem]:
        marker = os.environ.get("ZEROCLAW_FAULTY_MARKER")
        if marker:
            Path(marker).write_text("admitting", encoding="utf-8")
        threading.Event().wait()
        raise AssertionError("unreachable")

    def grade(self, params: bool, run: RunRecord) -> list[CheckResult]:
        return [CheckResult(self.name, False, "never admitted")]


class SwallowsWhenAdmitted(HangsWhenAdmitted):
    name = "swallows_when_admitted"

    def rules(self, params: bool, expects: Mapping[str, Any]) -> Iterable[Problem]:
        try:
            return super().rules(params, expects)
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__ on 'cached_property'") from exc


class Explode(Formatter):
    name = "explode"
    machine_readable = True

    def render(self, report: SuiteReport) -> str:
        raise RuntimeError("the formatter exploded")


class NotText(Formatter):
    name = "not_text"

    def render(self, report: SuiteReport) -> str:
        return None  # type: ignore[return-value]


@hookimpl
def zeroclaw_eval_register_tools(register: Callable[[str, Callable[[], Any]], None]) -> None:
    for tool in (Hang, Spin, Boom, Number, BadOutput, Exit):
        register(tool.name, tool)


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    register(ExplodesWhenGraded())
    register(HangsWhenGraded())
    register(ExplodesWhenAdmitted())
    register(HangsWhenAdmitted())
    register(SwallowsWhenAdmitted())


@hookimpl
def zeroclaw_eval_register_formatters(register: Callable[[Formatter], None]) -> None:
    register(Explode())
    register(NotText())
