"""zeroclaw-eval: replay agent-loop fixtures through a real agent loop and gate CI on them.

The public surface: the plugin marker, the extension base classes, the fixture and
report models, the library entry points and the errors.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zeroclaw_eval.admission import Case, Expectation, admit_file
    from zeroclaw_eval.agent import Agent, ModelReply, Provider, Tool, ToolCallRequest, ToolResult
    from zeroclaw_eval.bridged import BridgedAgent, BridgedSession
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
    from zeroclaw_eval.family import Family, NonEmptyStr, Params, Problem
    from zeroclaw_eval.fixture import LlmTrace
    from zeroclaw_eval.hookspecs import hookimpl, hookspec
    from zeroclaw_eval.mode import CaseProvider, RunMode
    from zeroclaw_eval.plugins import DEFAULT_PLUGINS, get_plugin_manager
    from zeroclaw_eval.registry import Registry
    from zeroclaw_eval.report import CaseReport, CheckResult, Formatter, SuiteReport
    from zeroclaw_eval.run_record import RecordedCall, RunRecord, empty_run
    from zeroclaw_eval.runner import run_case, run_cases, run_suite
    from zeroclaw_eval.suite import load_suite, vacuity
    from zeroclaw_eval.under_test import AgentSession, AgentUnderTest, ModelSide
    from zeroclaw_eval.workspace import case_workspace

# Importing the package imports none of the modules below; each public name is
# imported on first use (PEP 562). The ``zeroclaw`` script has to import this
# package before any of its code runs, and eager imports here made every command
# import pydantic and the whole harness before the CLI could decide what it needs
# (``zeroclaw --help``: 0.40 s, against 0.13 s now). tests/test_imports.py checks that
# this table and ``__all__`` agree.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "zeroclaw_eval.admission": ("Case", "Expectation", "admit_file"),
    "zeroclaw_eval.agent": (
        "Agent",
        "ModelReply",
        "Provider",
        "Tool",
        "ToolCallRequest",
        "ToolResult",
    ),
    "zeroclaw_eval.bridged": ("BridgedAgent", "BridgedSession"),
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
    "zeroclaw_eval.family": ("Family", "NonEmptyStr", "Params", "Problem"),
    "zeroclaw_eval.fixture": ("LlmTrace",),
    "zeroclaw_eval.hookspecs": ("hookimpl", "hookspec"),
    "zeroclaw_eval.mode": ("CaseProvider", "RunMode"),
    "zeroclaw_eval.plugins": ("DEFAULT_PLUGINS", "get_plugin_manager"),
    "zeroclaw_eval.run_record": ("RecordedCall", "RunRecord", "empty_run"),
    "zeroclaw_eval.registry": ("Registry",),
    "zeroclaw_eval.report": ("CaseReport", "CheckResult", "Formatter", "SuiteReport"),
    "zeroclaw_eval.runner": ("run_case", "run_cases", "run_suite"),
    "zeroclaw_eval.suite": ("load_suite", "vacuity"),
    "zeroclaw_eval.under_test": ("AgentSession", "AgentUnderTest", "ModelSide"),
    "zeroclaw_eval.workspace": ("case_workspace",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
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
    "CaseProvider",
    "CaseReport",
    "CheckResult",
    "ConfigError",
    "EvalConfig",
    "Expectation",
    "Family",
    "Formatter",
    "LlmTrace",
    "ModelReply",
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
    "ToolResult",
    "ZeroclawEvalError",
    "admit_file",
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
