"""zeroclaw-eval: replay agent-loop fixtures through a real agent loop and gate CI on them.

The public surface: the plugin marker, the extension base classes, the fixture and
report models, the library entry points and the errors.
"""

from __future__ import annotations

from zeroclaw_eval.admission import Case, Expectation, admit_file
from zeroclaw_eval.agent import Agent, ModelReply, Provider, Tool, ToolCallRequest, ToolResult
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
from zeroclaw_eval.record import RecordedCall, RunRecord, empty_run
from zeroclaw_eval.registry import Registry
from zeroclaw_eval.report import CaseReport, CheckResult, Formatter, SuiteReport
from zeroclaw_eval.runner import run_case, run_cases, run_suite
from zeroclaw_eval.suite import load_suite, vacuity

__all__ = [
    "DEFAULT_PLUGINS",
    "AdmissionError",
    "Agent",
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
