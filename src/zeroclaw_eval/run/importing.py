"""Traces become draft fixtures (``zeroclaw eval import``).

Each conversation :mod:`zeroclaw_eval.traces` finds is written as a fixture: its
user turns, the model's replies as scripted steps (text, tool calls with their ids
and arguments, the model, token usage), each with the request it answered,
normalised and compacted as ``record`` stores it, so that drift is compared from
the first replay (``tools`` left out of the comparison when the trace does not
show the offer). Where the tools are scripted (the default: the reference agent,
or an agent served its tools), their results are the fixture's ``tool_results``
and the offer its ``tool_definitions``; where the agent runs its own tools, they
are neither, and the results it must reproduce become needles.

Expectations are derived, never invented: the number of calls, the tools used, a
needle of each tool's first result (or, with no tool call, of the final answer),
listed in the capture record as drafts. Credentials the trace holds are
redacted, and said so. A document is admitted before it is written: a draft
replay would refuse is reported, never written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from zeroclaw_eval.agents.bridged import OfferedTool
from zeroclaw_eval.case.admission import admit_data
from zeroclaw_eval.errors import AdmissionError, ConfigError, ZeroclawEvalError
from zeroclaw_eval.grading.record import ModelRequest
from zeroclaw_eval.grading.requests import compact_record
from zeroclaw_eval.run.recording import attach_requests, object_schema, step
from zeroclaw_eval.traces.conversation import Conversation, Grouping, conversations
from zeroclaw_eval.traces.otlp import read_paths
from zeroclaw_eval.util.atomic import write_whole
from zeroclaw_eval.util.redact import redact_credentials

if TYPE_CHECKING:
    from zeroclaw_eval.agents.base import AgentUnderTest
    from zeroclaw_eval.modes.base import RunMode
    from zeroclaw_eval.plugins.registry import Registry

#: Who runs the tools in the replay: the harness from the script, or the agent.
ToolsMode = Literal["scripted", "agent"]

#: The longest needle taken from a result or an answer.
NEEDLE_CHARS = 60


@dataclass(frozen=True)
class Imported:
    """What an import did: the fixtures written, a line for each span or conversation
    it could not import, a line for each fixture it redacted, and the counts."""

    written: tuple[str, ...]
    refused: tuple[str, ...]
    redacted: tuple[str, ...]
    spans: int
    other_spans: int

    def exit_code(self) -> int:
        """0 when at least one fixture was written, else 1 (nothing could be imported).
        What was not imported is each a line of :attr:`refused`, either way."""
        return 0 if self.written else 1


def import_traces(
    paths: Sequence[Path],
    out: Path,
    registry: Registry,
    *,
    by: Grouping = "trace",
    tools: ToolsMode = "scripted",
    requests: bool = True,
    force: bool = False,
    agent: AgentUnderTest | None = None,
) -> Imported:
    """Write a draft fixture into ``out`` for every conversation of the trace files
    ``paths`` (files, or directories of them).

    Each is admitted in the registry's replay mode (held to ``agent``'s rules when
    given) before it is written. Fixtures already in ``out`` are refused before
    anything is written unless ``force``. Raises
    :class:`~zeroclaw_eval.errors.ZeroclawEvalError` for a file that cannot be read
    or written, and :class:`~zeroclaw_eval.errors.ConfigError` when ``tools`` are
    scripted for an agent that runs its own.
    """
    replay = _replay_mode(registry)
    if tools == "scripted" and agent is not None and agent.own_tools:
        # Its tools would run beside the script, and leave every scripted result unused.
        raise ConfigError(
            f"agent {agent.label!r} runs its own tools, so their results cannot be "
            "scripted: import with --tools agent"
        )
    try:
        read = read_paths(paths)
    except OSError as exc:
        raise ZeroclawEvalError(f"{exc.filename or exc}: cannot read: {exc.strerror}") from None
    found = conversations(read.spans, by)
    refused = [str(unread) for unread in read.unread] + found.refused
    drafts: list[tuple[Path, dict[str, Any], int]] = []
    names: set[str] = set()
    for conversation in found.conversations:
        base = name = fixture_name(conversation.key, by)
        # Two session ids may make the same file name: neither overwrites the other.
        number = 1
        while name in names:
            number += 1
            name = f"{base}-{number}"
        names.add(name)
        document = draft(conversation, name, by=by, tools=tools, requests=requests)
        if isinstance(document, str):
            refused.append(f"{by} {conversation.key}: {document}: not written")
            continue
        clean, hits = redact_credentials(document)
        drafts.append((out / f"{name}.json", clean, hits))
    existing = [str(target) for target, _, _ in drafts if target.exists()]
    if existing and not force:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise ZeroclawEvalError(f"{existing[0]}{more}: already exists; pass --force to overwrite")
    written: list[str] = []
    redacted: list[str] = []
    if drafts:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ZeroclawEvalError(f"{out}: cannot create the output directory: {exc}") from None
    for target, document, hits in drafts:
        try:
            admit_data(document, registry, replay, source=str(target), agent=agent)
        except AdmissionError as exc:
            refused.append(f"{exc} (imported, not written)")
            continue
        text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
        try:
            write_whole(target, text)
        except OSError as exc:
            raise ZeroclawEvalError(f"{target}: cannot write: {exc}") from None
        written.append(str(target))
        if hits:
            redacted.append(f"{target}: redacted {hits} credential(s) found in the trace")
    return Imported(
        tuple(written), tuple(refused), tuple(redacted), len(read.spans), found.other_spans
    )


def _replay_mode(registry: Registry) -> RunMode:
    for entry in registry.modes.values():
        if entry.obj.replays_scripts:
            return entry.obj
    raise ConfigError("import writes replay fixtures, and no registered mode replays scripts")


def fixture_name(key: str, by: Grouping) -> str:
    """The case and file name of a conversation: its trace or session id, made safe
    for a file name."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", key).strip("-.") or "unnamed"
    return f"{by}-{safe[:80]}"


def draft(
    conversation: Conversation,
    name: str,
    *,
    by: Grouping,
    tools: ToolsMode,
    requests: bool,
) -> dict[str, Any] | str:
    """The draft fixture of ``conversation``, or why it cannot be one."""
    calls = [request for call in conversation.calls for request in call.reply.tool_calls]
    missing = sorted(
        {request.name for request in calls if request.call_id not in conversation.results}
    )
    if missing and tools == "scripted":
        unanswered = next(r for r in calls if r.call_id not in conversation.results)
        return (
            f"the call {unanswered.call_id} to {unanswered.name!r} has no result in the "
            "trace, so it cannot be scripted (import with --tools agent to let the agent "
            "run its own tools)"
        )
    document: dict[str, Any] = {
        "model_name": name,
        "turns": [
            {"user_input": turn.user_input, "steps": [step(call.reply) for call in turn.calls]}
            for turn in conversation.turns
        ],
        "expects": {},
    }
    expects = derived_expects(conversation)
    if expects is None:
        return "the model neither called a tool nor answered with text: nothing to expect"
    document["expects"] = expects
    if tools == "scripted":
        scripted: dict[str, list[dict[str, Any]]] = {}
        for request in calls:
            result = conversation.results[request.call_id]
            entry: dict[str, Any] = {"result": result.text}
            if result.error:
                entry["error"] = True
            scripted.setdefault(request.name, []).append(entry)
        if scripted:
            document["tool_results"] = scripted
        if conversation.tools is not None:
            document["tool_definitions"] = {
                tool["name"]: {
                    "description": tool["description"],
                    "input_schema": object_schema(tool["parameters"]),
                }
                for tool in sorted(conversation.tools, key=lambda tool: str(tool["name"]))
            }
    stored = requests and attach_requests(document, _requests(conversation))
    if stored and conversation.tools is None:
        # The trace does not show the offer: the stored requests cannot say it.
        document["drift_ignore"] = ["tools"]
    observed = ["replies"]
    if stored:
        observed.append("requests")
    if conversation.tools is not None:
        observed.append("tool_offer")
    if conversation.results:
        observed.append("tool_results")
    document["capture"] = {
        "made_by": "import",
        "sources": [f"{by} {conversation.key}", *conversation.sources],
        "observed": observed,
        "results_missing": missing,
        "draft_expects": list(expects),
    }
    return document


def derived_expects(conversation: Conversation) -> dict[str, Any] | None:
    """What the trace shows and a replay can be held to: the number of tool calls, the
    tools used, and a needle of each tool's first result; with no tool call, a
    needle of the final answer. ``None`` when there is nothing to derive."""
    requests = [request for call in conversation.calls for request in call.reply.tool_calls]
    if not requests:
        final = conversation.turns[-1].calls[-1].reply.content or ""
        found = needle(final)
        return {"response_contains": [found]} if found else None
    expects: dict[str, Any] = {
        "exact_tool_calls": len(requests),
        "tools_used": sorted({request.name for request in requests}),
    }
    needles = []
    index: dict[str, int] = {}
    done: set[str] = set()
    for request in requests:
        at = index.get(request.name, 0)
        index[request.name] = at + 1
        result = conversation.results.get(request.call_id)
        if request.name in done or result is None:
            continue
        found = needle(result.text)
        if found:
            done.add(request.name)
            needles.append({"tool": request.name, "needle": found, "call_index": at})
    if needles:
        expects["tool_results_contain"] = needles
    return expects


def needle(text: str) -> str | None:
    """A needle of ``text``: its first non-blank line, stripped, cut to
    :data:`NEEDLE_CHARS`; ``None`` for a blank text."""
    for line in text.splitlines():
        kept = line.strip()[:NEEDLE_CHARS].strip()
        if kept:
            return kept
    return None


def _requests(conversation: Conversation) -> list[dict[str, Any]]:
    """Each call's request, normalised and compacted as a report carries them."""
    made = []
    for turn_number, turn in enumerate(conversation.turns):
        for step_number, call in enumerate(turn.calls):
            offer = call.tools if call.tools is not None else conversation.tools or ()
            made.append(
                ModelRequest(
                    turn_number,
                    step_number,
                    [dict(message) for message in call.messages],
                    [_offered(tool) for tool in offer],
                    dict(call.settings),
                )
            )
    return compact_record(made)


def _offered(tool: Mapping[str, Any]) -> OfferedTool:
    return OfferedTool(str(tool["name"]), str(tool["description"]), tool["parameters"])
