"""Scripted tool results: a fixture's ``tool_results``, admitted, then played.

A fixture may script what a named tool returns, call by call across the case::

    "tool_results": {"weather": [{"result": "12 C, rain"}, {"result": "timeout", "error": true}]}

so that a case can exercise a tool that cannot run in CI (it reaches a real
service), with results that never drift. An entry may script a fault of the
tool's side instead of a result: ``{"jsonrpc_error": {"code": -32603, "message":
"..."}}``, ``{"dropped": true}`` (the connection drops before the answer),
``{"hang": true}`` (no answer, ever: the agent must give up on the call; a run
is still bounded by the case's end, which closes its route, and
``case_timeout_s``), each served over MCP as it says and met by the reference
loop as the failed call it would be (:class:`~zeroclaw_eval.protocol.ToolFault`);
``delay_s`` delays a result or a fault. A scripted tool never runs: its n-th
scripted call gets the n-th scripted result, and a call gets the result of the
scripted call it is, whatever order the calls arrive in: the first unused result
whose scripted call has the very arguments the call carries (compared as JSON),
else the first unused one. So an agent that runs a step's calls concurrently, and
dispatches ``Paris-2`` before ``Paris-1``, still gets each city its own result.

A name no plugin registers is offered to the agent too (with an open ``{"type":
"object"}`` schema); a registered one keeps its description and schema.
``tool_definitions`` (written by ``record`` for the tools of a team's own MCP
server) gives a tool the description and schema it was offered with while recording,
so the replayed agent offers the model the same tools: a definition without scripted
results is a tool offered and never called (a call to it is a run error), unless a
real tool of that name is there (live): then that one runs.

Admission holds the script to the scripted steps, as it holds them to the
offer: a tool scripted no result, an error with no text, a result no scripted
call can reach (the steps call the tool fewer times than it has results), and a
script the expectations contradict (``tools_not_used`` naming the tool,
``all_tools_succeeded: true`` beside a scripted error) are refused with file and
field. At run time (:class:`ToolScript`) a call beyond the script, or a result
left unused when the case ends, is a run error naming the turn and the call.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from zeroclaw_eval.case.fixture import (
    LlmTrace,
    ScriptedToolResult,
    ToolCallsResponse,
    ToolDefinition,
)
from zeroclaw_eval.errors import RunError
from zeroclaw_eval.grading.family import Problem
from zeroclaw_eval.protocol import Tool, ToolFault, ToolResult
from zeroclaw_eval.report.model import plural
from zeroclaw_eval.util.jsonvalue import equal

#: The schema a scripted tool that no plugin registers is offered with.
OPEN_SCHEMA: Mapping[str, Any] = {"type": "object"}


def scripted_calls(trace: LlmTrace) -> Counter[str] | None:
    """How many times the scripted steps call each tool, or ``None`` when a turn has
    no steps (live mode): then what reaches a result is the model's to decide."""
    if any(turn.steps is None for turn in trace.turns):
        return None
    counts: Counter[str] = Counter()
    for turn in trace.turns:
        for step in turn.steps or ():
            if isinstance(step.response, ToolCallsResponse):
                counts.update(call.name for call in step.response.tool_calls)
    return counts


def scripted_arguments(trace: LlmTrace) -> dict[str, list[dict[str, Any]]]:
    """The arguments of each tool's scripted calls, in the order the steps make them."""
    asked: dict[str, list[dict[str, Any]]] = {}
    for turn in trace.turns:
        for step in turn.steps or ():
            if isinstance(step.response, ToolCallsResponse):
                for call in step.response.tool_calls:
                    asked.setdefault(call.name, []).append(call.arguments)
    return asked


def admit_tool_results(trace: LlmTrace, *, model_calls: bool = True) -> Iterator[Problem]:
    """Refuse a ``tool_results`` that is empty, contradicts itself or the expectations,
    or scripts a result no scripted call can reach (paths from the fixture's root);
    that last rule only where the model's scripted calls are the calls
    (``model_calls``), not code the model writes."""
    results = trace.tool_results or {}
    calls = scripted_calls(trace) if model_calls else None
    not_used = trace.expects.get("tools_not_used")
    all_succeed = trace.expects.get("all_tools_succeeded") is True
    for name, scripted in results.items():
        where = ("tool_results", name)
        if not scripted:
            yield Problem(where, "scripts no result: give at least one, or drop the tool")
            continue
        if isinstance(not_used, list) and name in not_used:
            yield Problem(where, f"contradicts tools_not_used naming {name!r}")
        for index, entry in enumerate(scripted):
            if entry.error and entry.result == "":
                yield Problem(
                    (*where, index, "result"),
                    "a scripted error needs its text: it is all the model is told",
                )
        reach = len(scripted) if calls is None else min(calls[name], len(scripted))
        if calls is not None and calls[name] < len(scripted):
            yield Problem(
                (*where, calls[name]),
                f"no scripted call reaches this result: the steps call {name!r} "
                f"{plural(calls[name], 'time')}",
            )
        if all_succeed:
            for index, entry in enumerate(scripted[:reach]):
                if entry.error or entry.fault is not None:
                    key = "error" if entry.error else entry.fault or ""
                    yield Problem(
                        (*where, index, key),
                        "contradicts all_tools_succeeded=true: this call is scripted to fail",
                    )


def admit_tool_definitions(trace: LlmTrace) -> Iterator[Problem]:
    """Refuse a ``tool_definitions`` entry whose schema is not an object schema, or that
    defines a tool the scripted steps call without a scripted result for it."""
    results = trace.tool_results or {}
    calls = scripted_calls(trace) or Counter()
    for name, definition in (trace.tool_definitions or {}).items():
        where = ("tool_definitions", name)
        if definition.input_schema.get("type") != "object":
            yield Problem(
                (*where, "input_schema", "type"),
                'must be "object": the arguments of a tool are an object',
            )
        if calls[name] and name not in results:
            yield Problem(
                where,
                f"the steps call {name!r}, but tool_results scripts no result for it: "
                "script its results, or drop the definition",
            )


class ToolScript:
    """One case attempt's scripted tools: each call gets the result of the scripted
    call it is (see the module's docstring).

    ``asked`` holds the arguments of each tool's scripted calls, in script order
    (:func:`scripted_arguments`); without it (live mode: no steps) the calls take
    the results in the order they come. A call beyond a tool's script gets a
    failed result, and the case a run error at the end of the turn
    (:meth:`check`); :meth:`finish` refuses a result left unused.
    """

    def __init__(
        self,
        results: Mapping[str, list[ScriptedToolResult]] | None,
        definitions: Mapping[str, ToolDefinition] | None = None,
        asked: Mapping[str, list[dict[str, Any]]] | None = None,
    ) -> None:
        self._results = {name: list(entries) for name, entries in (results or {}).items()}
        self._definitions = dict(definitions or {})
        self._asked = dict(asked or {})
        self._taken: dict[str, set[int]] = {}
        self._used: Counter[str] = Counter()
        self._turn = 0
        self._problems: list[str] = []

    def tools(self, available: Mapping[str, Tool]) -> dict[str, Tool]:
        """``available`` with each scripted tool in place of the real one (or added), and
        each defined tool that is not there added; offered as its definition has it,
        else as the real one is."""
        tools = dict(available)
        for name in (*self._results, *self._definitions):
            real = available.get(name)
            if real is not None and name not in self._results:
                continue  # defined, never scripted, and here for real (live): it runs
            definition = self._definitions.get(name)
            described: tuple[str, Mapping[str, Any]]
            if definition is not None:
                described = (definition.description, definition.input_schema)
            elif real is not None:
                described = (real.description, real.parameters)
            else:
                described = ("", OPEN_SCHEMA)
            tools[name] = ScriptedTool(self, name, *described)
        return tools

    def begin_turn(self, turn: int) -> None:
        self._turn = turn

    def next_result(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """The result for a call to ``name`` with ``arguments``: that of the first
        unused scripted call with the same arguments, else the first unused one."""
        scripted = self._results.get(name, [])  # a defined tool may script none
        call = self._used[name]
        self._used[name] += 1
        taken = self._taken.setdefault(name, set())
        unused = [index for index in range(len(scripted)) if index not in taken]
        if not unused:
            problem = (
                f"turn {self._turn}: call {call} to {name!r} has no scripted result "
                f"(tool_results.{name} scripts {plural(len(scripted), 'result')})"
            )
            self._problems.append(problem)
            return ToolResult(f"tool '{name}': {problem}", success=False)
        asked = self._asked.get(name, ())
        chosen = next(
            (
                index
                for index in unused
                if index < len(asked) and arguments is not None and equal(asked[index], arguments)
            ),
            unused[0],
        )
        taken.add(chosen)
        entry = scripted[chosen]
        if entry.delay_s is not None:  # a slow tool: whoever called waits
            time.sleep(entry.delay_s)
        if entry.jsonrpc_error is not None:
            raise ToolFault("jsonrpc_error", entry.jsonrpc_error.message, entry.jsonrpc_error.code)
        if entry.dropped:
            raise ToolFault("dropped", "the tool server dropped the connection")
        if entry.hang:
            raise ToolFault("hang", "the tool never answered")
        return ToolResult(entry.result or "", success=not entry.error)

    def check(self) -> None:
        """Raise the run error of the first call beyond the script, if any."""
        if self._problems:
            raise RunError(self._problems[0])

    def finish(self) -> None:
        """After the last turn: raise a run error for the first result left unused."""
        self.check()
        for name, scripted in self._results.items():
            used = self._used[name]
            if used < len(scripted):
                taken = self._taken.get(name, set())
                first = next(index for index in range(len(scripted)) if index not in taken)
                raise RunError(
                    f"after the last turn (turn {self._turn}): tool_results.{name}[{first}] "
                    f"left unused: the agent made {plural(used, 'call')} to {name!r} of "
                    f"{len(scripted)} scripted"
                )


class ScriptedTool:
    """A tool whose results are the fixture's: it never runs anything."""

    def __init__(
        self, script: ToolScript, name: str, description: str, parameters: Mapping[str, Any]
    ) -> None:
        self._script = script
        self.name = name
        self.description = description
        self.parameters = parameters

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        return self._script.next_result(self.name, arguments)
