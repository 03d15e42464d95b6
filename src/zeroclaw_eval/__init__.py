"""zeroclaw-eval: replay agent-loop fixtures through a real agent loop and gate CI on them.

The public surface: the plugin marker, the extension base classes, the fixture and
report models, the library entry points and the errors.
"""

from __future__ import annotations

from zeroclaw_eval.version import __version__ as __version__

# Not ``typing.TYPE_CHECKING``: importing typing costs this package's lightest users
# (the MCP relay, started per case) more than the rest of their start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zeroclaw_eval.agents.base import AgentSession, AgentUnderTest, ModelSide
    from zeroclaw_eval.agents.bridged import BridgedAgent, BridgedSession
    from zeroclaw_eval.agents.dialect import Dialect
    from zeroclaw_eval.agents.loop import Agent
    from zeroclaw_eval.case.admission import Case, Expectation, admit_file
    from zeroclaw_eval.case.fixture import LlmTrace
    from zeroclaw_eval.case.suite import load_suite, vacuity
    from zeroclaw_eval.config import EvalConfig, load_config
    from zeroclaw_eval.errors import (
        AdmissionError,
        ConfigError,
        PluginLoadError,
        ReportError,
        RunError,
        SuiteLoadError,
        ZeroclawEvalError,
    )
    from zeroclaw_eval.grading.family import Family, NonEmptyStr, Params, Problem, ToolReference
    from zeroclaw_eval.grading.record import ModelRequest, RecordedCall, RunRecord, empty_run
    from zeroclaw_eval.hookspecs import hookimpl, hookspec
    from zeroclaw_eval.modes.base import CaseProvider, RunMode
    from zeroclaw_eval.modes.notes import CaseNotes, case_notes
    from zeroclaw_eval.plugins.manager import DEFAULT_PLUGINS, get_plugin_manager
    from zeroclaw_eval.plugins.registry import Registry
    from zeroclaw_eval.protocol import ModelReply, Provider, Tool, ToolCallRequest, ToolResult
    from zeroclaw_eval.report.formatter import Formatter
    from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport
    from zeroclaw_eval.run.runner import run_case, run_cases, run_suite
    from zeroclaw_eval.workspace import case_workspace

# Importing the package imports none of the modules below; each public name is
# imported on first use (PEP 562). The ``zeroclaw`` script has to import this
# package before any of its code runs, and eager imports here made every command
# import pydantic and the whole harness before the CLI could decide what it needs
# (``zeroclaw --help``: 0.40 s, against 0.13 s now). tests/test_imports.py checks that
# this table and ``__all__`` agree.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "zeroclaw_eval.agents.base": ("AgentSession", "AgentUnderTest", "ModelSide"),
    "zeroclaw_eval.agents.bridged": ("BridgedAgent", "BridgedSession"),
    "zeroclaw_eval.agents.dialect": ("Dialect",),
    "zeroclaw_eval.agents.loop": ("Agent",),
    "zeroclaw_eval.case.admission": ("Case", "Expectation", "admit_file"),
    "zeroclaw_eval.case.fixture": ("LlmTrace",),
    "zeroclaw_eval.case.suite": ("load_suite", "vacuity"),
    "zeroclaw_eval.config": ("EvalConfig", "load_config"),
    "zeroclaw_eval.errors": (
        "AdmissionError",
        "ConfigError",
        "PluginLoadError",
        "ReportError",
        "RunError",
        "SuiteLoadError",
        "ZeroclawEvalError",
    ),
    "zeroclaw_eval.grading.family": (
        "Family",
        "NonEmptyStr",
        "Params",
        "Problem",
        "ToolReference",
    ),
    "zeroclaw_eval.grading.record": ("ModelRequest", "RecordedCall", "RunRecord", "empty_run"),
    "zeroclaw_eval.hookspecs": ("hookimpl", "hookspec"),
    "zeroclaw_eval.modes.base": ("CaseProvider", "RunMode"),
    "zeroclaw_eval.modes.notes": ("CaseNotes", "case_notes"),
    "zeroclaw_eval.plugins.manager": ("DEFAULT_PLUGINS", "get_plugin_manager"),
    "zeroclaw_eval.plugins.registry": ("Registry",),
    "zeroclaw_eval.protocol": ("ModelReply", "Provider", "Tool", "ToolCallRequest", "ToolResult"),
    "zeroclaw_eval.report.formatter": ("Formatter",),
    "zeroclaw_eval.report.model": ("CaseReport", "CheckResult", "SuiteReport"),
    "zeroclaw_eval.run.runner": ("run_case", "run_cases", "run_suite"),
    "zeroclaw_eval.workspace": ("case_workspace",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # here: the relay imports this package and must start fast

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "DEFAULT_PLUGINS",
    "AdmissionError",
    "Agent",
    "AgentSession",
    "AgentUnderTest",
    "BridgedAgent",
    "BridgedSession",
    "Case",
    "CaseNotes",
    "CaseProvider",
    "CaseReport",
    "CheckResult",
    "ConfigError",
    "Dialect",
    "EvalConfig",
    "Expectation",
    "Family",
    "Formatter",
    "LlmTrace",
    "ModelReply",
    "ModelRequest",
    "ModelSide",
    "NonEmptyStr",
    "Params",
    "PluginLoadError",
    "Problem",
    "Provider",
    "RecordedCall",
    "Registry",
    "ReportError",
    "RunError",
    "RunMode",
    "RunRecord",
    "SuiteLoadError",
    "SuiteReport",
    "Tool",
    "ToolCallRequest",
    "ToolReference",
    "ToolResult",
    "ZeroclawEvalError",
    "admit_file",
    "case_notes",
    "case_workspace",
    "empty_run",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "load_config",
    "load_suite",
    "run_case",
    "run_cases",
    "run_suite",
    "vacuity",
]
