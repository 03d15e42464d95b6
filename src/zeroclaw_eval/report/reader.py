"""Reading a ``json`` report back: the document becomes a :class:`SuiteReport` again.

The inverse of :func:`zeroclaw_eval.report.document.report_document`, for
``zeroclaw eval merge``. A report read back must say what the run said, so the
document is validated strictly (no coercion) and checked for consistency: the
counts must match the cases, and a case marked passed must have passed every one
of its checks. A hand-edited or truncated report is refused with the file and the
field, never merged into a green verdict. Keys this version does not know are
ignored: adding fields keeps the schema version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import NotRequired, TypedDict

from zeroclaw_eval.errors import ZeroclawEvalError
from zeroclaw_eval.report.document import SCHEMA_VERSION
from zeroclaw_eval.report.model import CaseReport, CheckResult, Retry, SuiteReport
from zeroclaw_eval.util.wording import MISSING, describe, dotted, shown


class ReportReadError(ZeroclawEvalError):
    """A JSON report could not be read back: unreadable, not JSON, or inconsistent."""


class _Doc(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


# The parts a report holds thousands of are typed dictionaries, not models: pydantic
# validates them as strictly, without building an object for each (a 10,000-case
# merge validates about 100,000 of them: 0.16 s as models, 0.06 s as dictionaries).
_STRICT = ConfigDict(strict=True)
_Seconds = Annotated[float, Field(ge=0)]


class CheckDoc(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    check: str
    passed: bool
    detail: str
    score: NotRequired[Annotated[float, Field(ge=0, le=1)]]
    undecided: NotRequired[bool]


class RetryDoc(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    reason: str
    attempt: int
    waited_s: float


class AttemptDoc(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    passed: bool
    ran: NotRequired[bool]
    error: str | None
    duration_s: NotRequired[_Seconds]
    input_tokens: NotRequired[int | None]
    output_tokens: NotRequired[int | None]
    cached_input_tokens: NotRequired[int | None]
    reasoning_tokens: NotRequired[int | None]
    cost: NotRequired[Annotated[float, Field(ge=0)] | None]
    usage: NotRequired[list[dict[str, Any]]]
    models: NotRequired[list[str]]
    retries: NotRequired[list[RetryDoc]]
    checks: list[CheckDoc]
    warnings: NotRequired[list[str]]
    capture: NotRequired[str | None]
    model_requests: NotRequired[list[dict[str, Any]]]


class CaseDoc(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    name: str
    source: str
    passed: bool
    ran: NotRequired[bool]
    error: str | None
    duration_s: NotRequired[_Seconds]
    models: NotRequired[list[str]]
    retries: NotRequired[list[RetryDoc]]
    checks: list[CheckDoc]
    warnings: NotRequired[list[str]]
    capture: NotRequired[str | None]
    model_requests: NotRequired[list[dict[str, Any]]]
    runs: NotRequired[Annotated[int, Field(ge=1)]]
    passes: NotRequired[Annotated[int, Field(ge=0)] | None]
    attempts: NotRequired[list[AttemptDoc]]


class ShardDoc(_Doc):
    index: int = Field(ge=1)
    count: int = Field(ge=1)


class ReportDoc(_Doc):
    schema_version: int
    suite: str
    mode: str
    total: int = Field(ge=0)
    passed: int = Field(ge=0)
    all_passed: bool
    gating: bool = True
    errors: list[str]
    interrupted: str | None = None
    config_digest: str = ""
    agent: str = ""
    shard: ShardDoc | None = None
    suite_total: int | None = Field(None, ge=0)
    selected_total: int | None = Field(None, ge=0)
    keyword: str | None = None
    live_settings: dict[str, Any] | None = None
    repeats: int = Field(1, ge=1)
    pass_k: list[int] = []
    cases: list[CaseDoc]


@dataclass(frozen=True)
class ReadReport:
    """A report read from ``path``, with what the suite report itself does not hold:
    the ``--shard K/N`` it was (``None`` for a whole run), the case count of the
    whole suite, and of the selection the shards were cut from (a report without
    ``selected_total`` predates it: its selection was the whole suite)."""

    path: str
    report: SuiteReport
    shard: tuple[int, int] | None
    suite_total: int
    selected_total: int


def read_report(path: Path) -> ReadReport:
    """Read one ``json`` report file. Raises :class:`ReportReadError` naming the file
    and, for a bad document, the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportReadError(f"{path}: no such report") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportReadError(f"{path}: cannot be read: {exc}") from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except ValueError as exc:
        raise ReportReadError(
            f"{path}: not a JSON report (write one with --format json or --report json:PATH): {exc}"
        ) from None
    return report_from_document(data, str(path))


def report_from_document(data: Any, path: str) -> ReadReport:
    """A ``json`` report document (parsed) as a :class:`ReadReport`; ``path`` names it."""
    if not isinstance(data, dict) or "cases" not in data or "schema_version" not in data:
        raise ReportReadError(f"{path}: not a zeroclaw eval JSON report")
    try:
        doc = ReportDoc.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        value: Any = data
        for part in error["loc"]:
            try:
                value = value[part]
            except (KeyError, IndexError, TypeError):
                value = MISSING
                break
        field = dotted(error["loc"])
        if (text := shown(value)) is not None:
            field += f"={text}"
        raise ReportReadError(f"{path}: {field}: {describe(error, value)}") from None
    if doc.schema_version != SCHEMA_VERSION:
        raise ReportReadError(
            f"{path}: schema_version={doc.schema_version}: this version reads "
            f"schema_version {SCHEMA_VERSION} only"
        )
    for index, case_doc in enumerate(doc.cases):
        _refuse_a_case_that_never_ran_yet_says_more(case_doc, f"{path}: cases[{index}]")
        _refuse_an_undecided_pass(case_doc, f"{path}: cases[{index}]")
        for attempt_index, attempt_doc in enumerate(case_doc.get("attempts", [])):
            where = f"{path}: cases[{index}].attempts[{attempt_index}]"
            _refuse_a_case_that_never_ran_yet_says_more(attempt_doc, where)
            _refuse_an_undecided_pass(attempt_doc, where)
    cases = tuple(_case(case) for case in doc.cases)
    passed_count = 0
    for index, (case_doc, case) in enumerate(zip(doc.cases, cases, strict=True)):
        # Each verdict worked out once: a 10,000-case merge reads 10,000 of them.
        passed = case.passed
        passed_count += passed
        attempt_docs = case_doc.get("attempts", [])
        if case.attempts:
            attempts = [attempt.passed for attempt in case.attempts]
        else:  # a case that ran once is its own one attempt
            attempts = [passed] if attempt_docs else []
        for attempt_index, (attempt_doc, attempt_passed) in enumerate(
            zip(attempt_docs, attempts, strict=True)
        ):
            if attempt_doc["passed"] != attempt_passed:
                raise ReportReadError(
                    f"{path}: cases[{index}].attempts[{attempt_index}].passed="
                    f"{json.dumps(attempt_doc['passed'])}: contradicts its checks and error "
                    "(the report was edited or is damaged)"
                )
        for key, stated, actual in (
            ("passed", case_doc["passed"], passed),
            ("runs", case_doc.get("runs"), len(attempts) or 1),
            ("passes", case_doc.get("passes"), sum(attempts) if attempts else int(passed)),
        ):
            if stated is not None and stated != actual:
                raise ReportReadError(
                    f"{path}: cases[{index}].{key}={json.dumps(stated)}: contradicts its "
                    f"checks, error and attempts, which say {json.dumps(actual)} (the report "
                    "was edited or is damaged)"
                )
    report = SuiteReport(
        doc.suite,
        cases,
        doc.mode,
        tuple(doc.errors),
        gating=doc.gating,
        interrupted=doc.interrupted,
        config_digest=doc.config_digest,
        repeats=doc.repeats,
        ks=tuple(doc.pass_k),
        agent=doc.agent,
        keyword=doc.keyword,
        live_settings=doc.live_settings,
    )
    all_passed = (
        not report.errors
        and report.interrupted is None
        and bool(cases)
        and passed_count == len(cases)
    )  # SuiteReport.all_passed, without a second pass over every case
    for key, stated, actual in (
        ("total", doc.total, len(cases)),
        ("passed", doc.passed, passed_count),
        ("all_passed", doc.all_passed, all_passed),
    ):
        if stated != actual:
            raise ReportReadError(
                f"{path}: {key}={json.dumps(stated)}: the cases say {json.dumps(actual)} "
                "(the report was edited or is damaged)"
            )
    shard = (doc.shard.index, doc.shard.count) if doc.shard is not None else None
    if shard is not None and shard[0] > shard[1]:
        raise ReportReadError(f"{path}: shard.index={shard[0]}: more than shard.count={shard[1]}")
    total = doc.suite_total if doc.suite_total is not None else len(cases)
    selected = doc.selected_total if doc.selected_total is not None else total
    return ReadReport(path, report, shard, total, selected)


def _refuse_an_undecided_pass(doc: CaseDoc | AttemptDoc, where: str) -> None:
    """An undecided check never passed: a report that says one did was edited."""
    for index, check in enumerate(doc["checks"]):
        if check.get("undecided") and check["passed"]:
            raise ReportReadError(
                f"{where}.checks[{index}].undecided=true: contradicts its passed (true): a "
                "check the evidence could not decide never passes (the report was edited "
                "or is damaged)"
            )


def _refuse_a_case_that_never_ran_yet_says_more(doc: CaseDoc | AttemptDoc, where: str) -> None:
    """A case (or attempt) that never ran has no checks, cannot pass, and says why in its
    error: a report that says otherwise was edited or is damaged."""
    if doc.get("ran", True):
        return
    for field, contradiction in (
        ("passed", "true" if doc["passed"] else None),
        ("checks", "graded" if doc["checks"] else None),
        ("error", "null" if doc["error"] is None else None),
    ):
        if contradiction is not None:
            raise ReportReadError(
                f"{where}.ran=false: contradicts its {field} ({contradiction}): a case that "
                "never ran has no checks, cannot pass, and says why it did not run (the "
                "report was edited or is damaged)"
            )


def _case(doc: CaseDoc) -> CaseReport:
    """The case as the run reported it. A case that ran once lists itself as its one
    attempt (which carries its token counts); a repeated case keeps every attempt."""
    listed = doc.get("attempts", [])
    if len(listed) == 1:
        return _outcome(doc, doc, _metered(listed[0]))
    attempts = tuple(_outcome(doc, attempt, _metered(attempt)) for attempt in listed)
    return _outcome(doc, doc, {}, attempts)


def _outcome(
    case: CaseDoc,
    doc: CaseDoc | AttemptDoc,
    metered: dict[str, Any],
    attempts: tuple[CaseReport, ...] = (),
) -> CaseReport:
    """One outcome of ``case``: the case itself, or one of its attempts (``doc``)."""
    return CaseReport(
        case["name"],
        case["source"],
        _checks(doc["checks"]),
        doc["error"],
        doc.get("duration_s", 0.0),
        models=tuple(doc.get("models", ())),
        retries=_retries(doc.get("retries", [])),
        ran=doc.get("ran", True),
        attempts=attempts,
        warnings=tuple(doc.get("warnings", ())),
        requests=tuple(doc.get("model_requests", ())),
        capture=doc.get("capture"),
        **metered,
    )


#: The usage fields an attempt carries, all optional (a replay run has only the tokens).
_METERED = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens", "cost")


def _metered(attempt: AttemptDoc) -> dict[str, Any]:
    found: dict[str, Any] = {key: attempt.get(key) for key in _METERED}
    found["usage"] = tuple(attempt.get("usage", ()))
    return found


def _checks(docs: list[CheckDoc]) -> tuple[CheckResult, ...]:
    return tuple(
        CheckResult(
            check["check"],
            check["passed"],
            check["detail"],
            score=check.get("score"),
            undecided=check.get("undecided", False),
        )
        for check in docs
    )


def _retries(docs: list[RetryDoc]) -> tuple[Retry, ...]:
    return tuple(Retry(retry["reason"], retry["attempt"], retry["waited_s"]) for retry in docs)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name}")
