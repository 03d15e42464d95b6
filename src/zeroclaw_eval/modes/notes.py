"""What the model side tells a case's report: which model answered, what was retried,
and what a replay of a recorded or imported fixture reproduced.

The runner opens a :class:`CaseNotes` around each case (:func:`collecting`); a
provider takes the open one with :func:`case_notes` when it is made (on the
case's thread) and adds to it as it answers, from whichever thread calls it. A
context variable carries it, so cases running in parallel threads keep their
notes apart, and nothing has to be threaded through the agent loop, which never
sees the model side's bookkeeping.

A third-party mode's provider does the same through the public
``zeroclaw_eval.case_notes()``; the report shows what it noted beside the built-ins'.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from zeroclaw_eval.report.model import Retry


@dataclass
class CaseNotes:
    """The notes of one case, in the order things happened."""

    models: list[str] = field(default_factory=list)
    """The model names the server reported, each once, in order of first appearance."""
    retries: list[Retry] = field(default_factory=list)
    reproduced: str | None = None
    """What a replay reproduced, when it played a recorded or imported fixture's whole
    script: the fixture's capture record in one line."""

    def served_by(self, model: str | None) -> None:
        """Note the model a reply says answered (``None``: the reply did not say)."""
        if model and model not in self.models:
            self.models.append(model)

    def reproduced_sequence(self, capture: str) -> None:
        """Note that every scripted step of a fixture with a capture record was
        played; ``capture`` says what its maker observed and what not."""
        self.reproduced = capture

    def retried(self, reason: str, attempt: int, waited_s: float) -> None:
        """Note a request retried: why (``HTTP 503``), after which attempt of it
        (1-based), and how long it waited before the next."""
        self.retries.append(Retry(reason, attempt, waited_s))


_OPEN: ContextVar[CaseNotes | None] = ContextVar("zeroclaw_eval_case_notes", default=None)


@contextmanager
def collecting() -> Iterator[CaseNotes]:
    """Open fresh notes for the case about to run on this thread."""
    notes = CaseNotes()
    token = _OPEN.set(notes)
    try:
        yield notes
    finally:
        _OPEN.reset(token)


def case_notes() -> CaseNotes:
    """The notes of the case running on this thread (a throwaway set outside any case,
    so that a provider used on its own still works). Take them when the provider is
    made, which happens on the case's thread; use them from any thread after."""
    notes = _OPEN.get()
    return notes if notes is not None else CaseNotes()
