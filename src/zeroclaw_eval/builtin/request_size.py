"""Budgets on what the agent sends the model: ``max_request_chars`` (every request)
and ``max_total_request_chars`` (all of them together), per case.

What an agent controls is what it sends: how much history it carries, how large
the tool results it passes on are, how many tools it offers. These families
measure it from the recorded requests themselves, so they hold in every mode,
replay included, where a token budget would only grade the script's made-up
counts.

The measure is the characters of the text the model reads: every message's
content, the name and arguments of every tool call the assistant made, and each
offered tool's name, description and parameter schema (as compact JSON). It is
characters (Unicode code points), not bytes: UTF-8 bytes would weigh a non-ASCII
text two to four times over, unlike any tokenizer. And it is the text, not the
HTTP body: the body depends on the wire (a Responses-API agent and a
chat-completions one send different JSON for one conversation), on escaping, and
does not exist for the reference loop, which calls its provider directly; the
text is the same whichever wire carried it, and tracks input tokens closely
enough to bound them (about four characters a token in English prose).
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Callable
from typing import Any

from pydantic import PositiveInt

from zeroclaw_eval.grading.family import Family
from zeroclaw_eval.grading.record import ModelRequest, RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural

REQUESTS = frozenset({"requests"})

#: Why a run with answers and no recorded request cannot be measured.
UNRECORDED = "n/a: the agent recorded no model request, so there is nothing to measure"


def request_chars(request: ModelRequest) -> int:
    """The characters of the text ``request`` shows the model (see the module's doc)."""
    size = 0
    for message in request.messages:
        content = message.get("content")
        if isinstance(content, str):
            size += len(content)
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                size += sum(
                    len(v)
                    for v in (function.get("name"), function.get("arguments"))
                    if isinstance(v, str)
                )
    for tool in request.tools:
        schema = json.dumps(dict(tool.parameters), ensure_ascii=False, separators=(",", ":"))
        size += len(tool.name) + len(tool.description) + len(schema)
    return size


class _SizeBudget(Family[int]):
    """A bound on the characters of the case's requests (see the module's doc)."""

    params = PositiveInt

    def evidence(self, params: Any) -> frozenset[str]:
        return REQUESTS

    def grade(self, params: int, run: RunRecord) -> list[CheckResult]:
        check = f"{self.name}: {params}"
        if not run.requests and run.responses:  # it answered, and kept no request
            return [CheckResult.not_decided(check, UNRECORDED)]
        sizes = [request_chars(request) for request in run.requests]
        return [self.bound(check, params, sizes, run.requests)]

    @abstractmethod
    def bound(
        self, check: str, limit: int, sizes: list[int], requests: list[ModelRequest]
    ) -> CheckResult:
        """The check of the requests' ``sizes`` (in the order of ``requests``) against ``limit``."""


class MaxRequestChars(_SizeBudget):
    """Every model request of the case shows the model at most ``n`` characters."""

    name = "max_request_chars"
    description = "every model request shows the model at most n characters of text"

    def bound(
        self, check: str, limit: int, sizes: list[int], requests: list[ModelRequest]
    ) -> CheckResult:
        over = [
            f"turn {request.turn} request {request.step}: {size}"
            for request, size in zip(requests, sizes, strict=True)
            if size > limit
        ]
        if over:
            shown = "; ".join(over[:3]) + ("; ..." if len(over) > 3 else "")
            return CheckResult(
                check, False, f"{plural(len(over), 'request')} over {limit} characters ({shown})"
            )
        largest = max(sizes, default=0)
        return CheckResult(
            check, True, f"the largest of {plural(len(sizes), 'request')}: {largest} characters"
        )


class MaxTotalRequestChars(_SizeBudget):
    """The model requests of the case show the model at most ``n`` characters in all."""

    name = "max_total_request_chars"
    description = "the case's model requests show the model at most n characters in all"

    def bound(
        self, check: str, limit: int, sizes: list[int], requests: list[ModelRequest]
    ) -> CheckResult:
        total = sum(sizes)
        detail = f"{total} characters over {plural(len(sizes), 'request')}"
        if total > limit:
            return CheckResult(check, False, f"{detail}, more than {limit}")
        return CheckResult(check, True, detail)


FAMILIES: tuple[type[Family[Any]], ...] = (MaxRequestChars, MaxTotalRequestChars)


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    for family in FAMILIES:
        register(family())
