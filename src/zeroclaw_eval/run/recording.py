"""Recording: a live run becomes replay fixtures (``zeroclaw eval record``).

A :class:`RecordingMode` wraps a mode and each case's provider, keeping every
reply the model gave, turn by turn; the agent loop is not touched. The fixture
written for a case has the case's name, its user inputs, those replies as the
``steps`` (text or tool calls, with token counts) and the case's own
``expects``, so its replay reaches the same verdict the live run did.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zeroclaw_eval.case.admission import Case, admit_data
from zeroclaw_eval.case.fixture import LlmTrace
from zeroclaw_eval.case.offer import check_offer, offered_names
from zeroclaw_eval.errors import AdmissionError, ConfigError, RunError, ZeroclawEvalError
from zeroclaw_eval.grading.family import Problem
from zeroclaw_eval.modes.base import CaseProvider, RunMode
from zeroclaw_eval.protocol import Message, ModelReply, Tool, ToolResult
from zeroclaw_eval.report.model import plural
from zeroclaw_eval.util.atomic import write_whole

if TYPE_CHECKING:
    from zeroclaw_eval.config import EvalConfig
    from zeroclaw_eval.plugins.registry import Registry
    from zeroclaw_eval.report.model import SuiteReport
    from zeroclaw_eval.run.runner import Progress
    from zeroclaw_eval.run.session import Session


class RecordingProvider(CaseProvider):
    """Passes everything to ``inner`` and keeps each reply under its turn."""

    def __init__(self, inner: CaseProvider) -> None:
        self.inner = inner
        self.turns: list[list[ModelReply]] = []

    def begin_turn(self, turn: int) -> None:
        self.turns.append([])
        self.inner.begin_turn(turn)

    def respond(self, messages: Sequence[Message], tools: Sequence[Tool]) -> ModelReply:
        reply = self.inner.respond(messages, tools)
        self.turns[-1].append(reply)
        return reply

    def end_turn(self, turn: int) -> None:
        self.inner.end_turn(turn)


class RecordingMode(RunMode):
    """``inner`` with every case's replies recorded; look them up with :meth:`replies`."""

    def __init__(self, inner: RunMode) -> None:
        self.inner = inner
        # The case a worker thread is setting up: its provider is made just before
        # its tools, on the same thread.
        self._current = threading.local()
        self._kept: dict[int, dict[str, list[ToolResult]]] = {}
        self._defined: dict[int, dict[str, dict[str, Any]]] = {}
        # Reports name the recorded mode, and it keeps what it can do.
        self.name = inner.name  # type: ignore[misc]
        self.replays_scripts = inner.replays_scripts  # type: ignore[misc]
        self.talks_to_provider = inner.talks_to_provider  # type: ignore[misc]
        self.unobservable = inner.unobservable  # type: ignore[misc]
        self._lock = threading.Lock()
        self._recorded: dict[int, RecordingProvider] = {}

    def admit(self, trace: LlmTrace) -> Iterable[Problem]:
        return self.inner.admit(trace)

    def check_config(self, config: EvalConfig, tools: Collection[str]) -> None:
        self.inner.check_config(config, tools)

    def generation_settings(self, config: EvalConfig) -> Mapping[str, Any] | None:
        return self.inner.generation_settings(config)

    def tools(self, available: Mapping[str, Tool], config: EvalConfig) -> Mapping[str, Tool]:
        """The inner mode's tools, each of a team's own MCP server's (``upstream``) kept
        call by call for the case being set up, and its definition as offered."""
        offered = self.inner.tools(available, config)
        key = getattr(self._current, "trace", None)
        if key is None:
            return offered
        with self._lock:
            kept = self._kept.setdefault(key, {})
            defined = self._defined.setdefault(key, {})
        for name, tool in offered.items():
            if getattr(tool, "upstream", False):
                defined[name] = {
                    "description": tool.description,
                    "input_schema": object_schema(tool.parameters),
                }
        return {
            name: _Kept(tool, kept) if getattr(tool, "upstream", False) else tool
            for name, tool in offered.items()
        }

    def concurrency(self, config: EvalConfig) -> int:
        return self.inner.concurrency(config)

    def provider(self, trace: LlmTrace, config: EvalConfig) -> RecordingProvider:
        recording = RecordingProvider(self.inner.provider(trace, config))
        with self._lock:  # cases may run in threads
            self._recorded[id(trace)] = recording
        self._current.trace = id(trace)
        return recording

    def tool_results(self, case: Case) -> dict[str, list[ToolResult]]:
        """What a team's own MCP server returned to ``case``, per tool, in call order."""
        return self._kept.get(id(case.trace), {})

    def tool_definitions(self, case: Case) -> dict[str, dict[str, Any]]:
        """How the tools of a team's own MCP server were offered to ``case``, per tool."""
        return self._defined.get(id(case.trace), {})

    def replies(self, case: Case) -> list[list[ModelReply]]:
        """The replies recorded for ``case``, per turn. Raises :class:`RunError` if it never ran."""
        recording = self._recorded.get(id(case.trace))
        if recording is None:
            raise RunError(f"case {case.name!r} was not run, so nothing was recorded")
        return recording.turns


def object_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` as the MCP tool server lists it to the agent: an object schema,
    whatever type (or none) the team's server gave."""
    rest = {key: value for key, value in schema.items() if key != "type"}
    return {"type": "object", **rest}


class _Kept:
    """A tool whose every result is kept (the real MCP server's, for the fixture)."""

    def __init__(self, tool: Tool, kept: dict[str, list[ToolResult]]) -> None:
        self._tool = tool
        self._kept = kept
        self.name = tool.name
        self.description = tool.description
        self.parameters = tool.parameters

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        result = self._tool.run(arguments)
        self._kept.setdefault(self.name, []).append(result)
        return result


def step(reply: ModelReply) -> dict[str, Any]:
    """A recorded reply as a fixture step: all of it that the agent loop used.

    Text beside tool calls is kept (an empty string too: the agent sends back
    ``""`` and ``null`` differently), and so are the calls' order and ids, a
    refusal, the model the server said answered, and the usage it reported
    (``usage``, left out when it reported none). Replaying the step gives the
    agent the same reply the live model gave.
    """
    response: dict[str, Any]
    if reply.tool_calls:
        response = {"type": "tool_calls"}
        if reply.content is not None:
            response["content"] = reply.content
        response["tool_calls"] = [
            {"id": call.call_id, "name": call.name, "arguments": call.arguments}
            for call in reply.tool_calls
        ]
    else:
        # The agent reads a null text reply as "": the same turn either way.
        response = {"type": "text", "content": reply.content or ""}
        if reply.refusal is not None:
            response["refusal"] = reply.refusal
    response["input_tokens"] = reply.input_tokens
    response["output_tokens"] = reply.output_tokens
    if reply.model:
        response["model"] = reply.model
    # The provider's own figures, kind by kind, when it reported them: a step without
    # ``usage`` says none was reported (its counts are then 0 only for the agent's sake).
    if reply.usage is not None:
        response["usage"] = {
            kind: value for kind, value in vars(reply.usage).items() if value is not None
        }
    return {"response": response}


def fixture_document(
    case: Case,
    replies: Sequence[Sequence[ModelReply]],
    requests: Sequence[Mapping[str, Any]] = (),
    served: Mapping[str, Sequence[ToolResult]] | None = None,
    defined: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The replay fixture for a recorded case: its own inputs, expects and scripted tool
    results, the model's steps, what a team's own MCP server returned (``served``) as
    scripted tool results too, how its tools were offered (``defined``) as
    ``tool_definitions``, and with each step the request it answered when
    ``requests`` (the case report's, normalised and compacted) pair up with the steps
    one to one."""
    document: dict[str, Any] = {
        "model_name": case.trace.model_name,
        "turns": [
            {"user_input": turn.user_input, "steps": [step(reply) for reply in turn_replies]}
            for turn, turn_replies in zip(case.trace.turns, replies, strict=True)
        ],
        "expects": case.trace.expects,
    }
    if case.trace.drift_ignore is not None:
        document["drift_ignore"] = case.trace.drift_ignore
    scripted: dict[str, list[dict[str, Any]]] = {}
    for name, entries in (case.trace.tool_results or {}).items():
        # The recording ran on them: so does its replay.
        scripted[name] = [entry.model_dump(exclude_defaults=True) for entry in entries]
    for name, results in (served or {}).items():
        scripted[name] = [
            {"result": result.output}
            if result.success
            else {"result": result.output, "error": True}
            for result in results
        ]
    if scripted or case.trace.tool_results is not None:
        document["tool_results"] = scripted
    definitions = {
        name: definition.model_dump(exclude_defaults=True)
        for name, definition in (case.trace.tool_definitions or {}).items()
    }
    # The replay offers the model the server's tools as the recording did, the
    # ones never called too: otherwise its requests drift from the recorded ones.
    definitions.update({name: dict(entry) for name, entry in (defined or {}).items()})
    if definitions or case.trace.tool_definitions is not None:
        document["tool_definitions"] = dict(sorted(definitions.items()))
    attach_requests(document, requests)
    return document


def capture_record(document: Mapping[str, Any], mode: str, agent: str) -> dict[str, Any]:
    """What ``record`` observed of a case it wrote as ``document``: the model's replies
    in ``mode``, through ``agent``; the requests when every step stores one; the
    results of the tools, which crossed the model boundary inside those requests (or
    came from a team's own MCP server, scripted); the offer of that server's tools.
    The expects are the case author's, not drafts."""
    from zeroclaw_eval.version import __version__

    steps = [step for turn in document["turns"] for step in turn.get("steps") or ()]
    stored = bool(steps) and all("request" in step for step in steps)
    called = any(step["response"].get("tool_calls") for step in steps)
    observed = ["replies"]
    if stored:
        observed.append("requests")
    if document.get("tool_definitions"):
        observed.append("tool_offer")
    if document.get("tool_results") or (stored and called):
        observed.append("tool_results")
    return {
        "made_by": "record",
        "sources": [f"zeroclaw-eval {__version__} record, mode {mode}, agent {agent}"],
        "observed": observed,
    }


def attach_requests(document: dict[str, Any], requests: Sequence[Mapping[str, Any]]) -> bool:
    """Store each request with the step that answered it (``turn``/``step`` of the
    report's entries), replacing what the steps stored; whether it did.

    Nothing is stored unless every scripted step has exactly one request: a
    compacted request leans on the one before it, so a partial set would not
    expand (an agent that records no requests leaves a fixture without them).
    """
    steps = [
        (turn, number, entry)
        for turn, listed in enumerate(document["turns"])
        for number, entry in enumerate(listed.get("steps") or ())
    ]
    places = [(request.get("turn"), request.get("step")) for request in requests]
    if places != [(turn, number) for turn, number, _ in steps]:
        return False
    for (_, _, entry), request in zip(steps, requests, strict=True):
        entry["request"] = {
            key: value for key, value in request.items() if key not in ("turn", "step")
        }
    return True


def write_fixture(
    document: dict[str, Any],
    target: Path,
    registry: Registry,
    replay: RunMode,
    config: EvalConfig | None = None,
) -> None:
    """Admit ``document`` as a replay fixture (held to ``config``'s tool offer when
    given), then write it to ``target``.

    Admitting first means a file that replay would refuse is never written.
    Raises :class:`~zeroclaw_eval.errors.AdmissionError`.
    """
    case = admit_data(document, registry, replay, source=str(target))
    if config is not None:
        offered = offered_names(config, registry.tools)
        check_offer(case, offered, registry.tools, config.offer_key)
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    write_whole(target, text)  # a Ctrl-C never leaves half a fixture


@dataclass(frozen=True)
class Recorded:
    """What ``zeroclaw eval record`` did: the live run's report, how many fixtures it
    wrote, and a line for each recording replay would refuse (not written);
    ``updated`` names each fixture ``--update`` rewrote."""

    report: SuiteReport
    written: int
    refused: tuple[str, ...]
    updated: tuple[str, ...] = ()

    def exit_code(self) -> int:
        """0 iff every case passed and was written."""
        return self.report.exit_code() or (1 if self.refused else 0)


def record_suite(
    session: Session,
    suite: Path,
    out: Path,
    *,
    force: bool = False,
    replay_until: int | None = None,
    progress: Progress | None = None,
    admitted: Callable[[], None] | None = None,
) -> Recorded:
    """Run ``suite`` live through ``session`` and write each case that ran into ``out``
    as a replay fixture of the model's replies.

    With ``replay_until`` N, each case's first N turns are replayed from its
    script and only the rest asked of the live model
    (:mod:`zeroclaw_eval.run.splice`); the fixture keeps both.

    One attempt per case: a fixture records one conversation, and replays to its
    verdict. Fixtures already in ``out`` are refused before anything runs unless
    ``force``; ``out`` is made before anything runs too. Raises
    :class:`~zeroclaw_eval.errors.ZeroclawEvalError` for either, and when a
    fixture cannot be written.
    """
    from zeroclaw_eval.run.session import Plan

    registry = session.registry
    provider, scripted = recording_modes(registry, session.loaded.config.mode)
    config = session.loaded.config.model_copy(
        update={"mode": provider.name, "repeats": 1, "pass_k": None, "report_requests": "all"}
    )
    if replay_until is None:
        live = RecordingMode(provider)
    else:
        from zeroclaw_eval.run.splice import SplicedMode

        live = RecordingMode(SplicedMode(scripted, provider, replay_until))
    plan = Plan(config, live, session.agent())
    cases = session.admit(plan, directory=suite, admitted=admitted)
    targets = [out / Path(case.source).name for case in cases]
    existing = [str(target) for target in targets if target.exists()]
    if existing and not force:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise ZeroclawEvalError(f"{existing[0]}{more}: already exists; pass --force to overwrite")
    try:
        out.mkdir(parents=True, exist_ok=True)  # before running: fail fast, not after
    except OSError as exc:
        raise ZeroclawEvalError(f"{out}: cannot create the output directory: {exc}") from None
    report = session.run_cases(plan, cases, suite=str(suite), progress=progress)
    written = 0
    refused: list[str] = []
    for case, case_report, target in zip(cases, report.cases, targets, strict=True):
        if case_report.error is None:
            document = fixture_document(
                case,
                live.replies(case),
                case_report.requests,
                live.tool_results(case),
                live.tool_definitions(case),
            )
            document["capture"] = capture_record(document, provider.name, plan.agent.label)
            stored = _store(document, target, registry, scripted, config)
            if stored is not None:
                refused.append(f"{stored} (recorded, not written)")
            else:
                written += 1
    return Recorded(report, written, tuple(refused))


def update_suite(
    session: Session,
    suite: Path,
    *,
    progress: Progress | None = None,
    admitted: Callable[[], None] | None = None,
    allow_failed: bool = False,
) -> Recorded:
    """Replay ``suite`` and store in each of its fixtures the requests its steps
    answered now (``zeroclaw eval record --update``): after a reviewed, intended
    change of the agent, the recording's requests follow it.

    Everything else in a fixture (its scripted replies, its expects, its keys'
    order) is kept as written. Drift is not compared while updating; a case that
    hits a run error, or whose requests do not pair with its steps, is reported
    and left unchanged, and so is one whose checks failed unless ``allow_failed``:
    the requests of an agent that now fails the case are not a reviewed change.
    """
    from zeroclaw_eval.run.session import Plan
    from zeroclaw_eval.util import strictjson
    from zeroclaw_eval.util.paths import display_root

    registry = session.registry
    _, scripted = recording_modes(registry, session.loaded.config.mode)
    config = session.loaded.config.model_copy(
        update={
            "mode": scripted.name,
            "repeats": 1,
            "pass_k": None,
            "drift": "off",
            "report_requests": "all",
        }
    )
    plan = Plan(config, scripted, session.agent())
    cases = session.admit(plan, directory=suite, admitted=admitted)
    report = session.run_cases(plan, cases, suite=str(suite), progress=progress)
    updated: list[str] = []
    refused: list[str] = []
    for case, case_report in zip(cases, report.cases, strict=True):
        if case_report.error is not None:
            refused.append(f"{case.source}: not updated: {case_report.error}")
            continue
        if not case_report.passed and not allow_failed:
            failed = sum(not check.passed for check in case_report.checks)
            refused.append(
                f"{case.source}: not updated: its case failed ({plural(failed, 'check')}); "
                "fix the agent or the case, or pass --allow-failed"
            )
            continue
        # Sources are shown relative to the work tree (or the configuration's directory).
        target = display_root(session.loaded.base_dir, session.cwd) / case.source
        try:
            document = strictjson.loads(target.read_text(encoding="utf-8").removeprefix("\ufeff"))
        except (OSError, ValueError) as exc:
            raise ZeroclawEvalError(f"{target}: cannot read it back: {exc}") from None
        if not attach_requests(document, case_report.requests):
            refused.append(
                f"{case.source}: not updated: the agent's requests do not pair one to one "
                "with the scripted steps (an agent that records no requests?)"
            )
            continue
        stored = _store(document, target, registry, scripted, config)
        if stored is not None:
            refused.append(f"{stored} (not updated)")
        else:
            updated.append(case.source)
    return Recorded(report, len(updated), tuple(refused), tuple(updated))


def _store(
    document: dict[str, Any],
    target: Path,
    registry: Registry,
    scripted: RunMode,
    config: EvalConfig,
) -> AdmissionError | None:
    """Write ``document`` to ``target`` as :func:`write_fixture` does, the provider's
    key redacted from every text in it (a tool result of the team's server, a reply
    of a mode that does not redact its own); the refusal when it would not be
    admitted (nothing is then written). A write that fails is the run's error,
    naming the file."""
    try:
        write_fixture(config.secrets().value(document), target, registry, scripted, config)
    except AdmissionError as exc:
        return exc
    except OSError as exc:
        raise ZeroclawEvalError(f"{target}: cannot write: {exc}") from None
    return None


def recording_modes(registry: Registry, configured: str) -> tuple[RunMode, RunMode]:
    """The mode ``record`` runs its cases in, and the one its fixtures must replay in.

    The first talks to a provider: ``configured`` (``[eval].mode``) when it does,
    else the first registered mode that does (``live``). The second is the first
    registered mode that replays scripts (``replay``). Raises
    :class:`~zeroclaw_eval.errors.ConfigError` when either is missing.
    """
    modes = [entry.obj for entry in registry.modes.values()]
    chosen = registry.modes.get(configured)
    talking = [mode for mode in modes if mode.talks_to_provider]
    if chosen is not None and chosen.obj.talks_to_provider:
        talking.insert(0, chosen.obj)
    scripted = [mode for mode in modes if mode.replays_scripts]
    for found, what in ((talking, "talks to a provider"), (scripted, "replays scripts")):
        if not found:
            blocked = (
                f" (blocked plugins: {', '.join(registry.blocked)})" if registry.blocked else ""
            )
            raise ConfigError(
                f"record needs a run mode that {what}, and none is registered{blocked}"
            )
    return talking[0], scripted[0]
