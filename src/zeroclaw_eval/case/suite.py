"""Suites: a directory's direct ``*.json`` children, admitted, in path order.

Loading is not recursive and never shrinks silently: a missing or empty suite,
an entry that cannot be read and every refused fixture are errors, all reported
at once. Also here: the empty-run vacuity check, which admission cannot do.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from zeroclaw_eval.case.admission import Case, admit_file
from zeroclaw_eval.errors import AdmissionError, SuiteLoadError
from zeroclaw_eval.grading.record import empty_run
from zeroclaw_eval.modes.base import RunMode
from zeroclaw_eval.plugins.registry import Registry
from zeroclaw_eval.report.model import plural

if TYPE_CHECKING:
    from zeroclaw_eval.agents.base import AgentUnderTest
    from zeroclaw_eval.config import EvalConfig


def fixture_paths(directory: Path) -> list[Path]:
    """The suite's case files: direct children named ``*.json``, sorted by path.

    Raises :class:`SuiteLoadError` when there are none: an empty suite is never green.
    """
    try:
        with os.scandir(directory) as entries:
            names = sorted(entry.name for entry in entries if entry.name.endswith(".json"))
    except FileNotFoundError:
        raise SuiteLoadError(f"suite {directory}: no such directory") from None
    except NotADirectoryError:
        raise SuiteLoadError(f"suite {directory}: not a directory") from None
    except OSError as exc:
        raise SuiteLoadError(
            f"suite {directory}: cannot be listed: {exc.strerror or exc}"
        ) from None
    if not names:
        raise SuiteLoadError(
            f"suite {directory}: no *.json fixtures: an empty suite is never green"
        )
    return [directory / name for name in names]


def load_suite(
    directory: Path,
    registry: Registry,
    mode: RunMode,
    *,
    source: Callable[[Path], str] = str,
    config: EvalConfig | None = None,
    agent: AgentUnderTest | None = None,
    gate: bool = False,
) -> list[Case]:
    """Admit every case of the suite, or raise :class:`SuiteLoadError` listing every refusal.

    ``source(path)`` is how each case names its fixture in reports (default: the path).
    With ``config``, scripted calls are also held to its tool offer
    (:mod:`zeroclaw_eval.case.offer`). ``agent``, the agent under test, may refuse
    fixtures it cannot certify.
    """
    return admit_files(
        fixture_paths(directory),
        registry,
        mode,
        suite=str(directory),
        source=source,
        config=config,
        agent=agent,
        gate=gate,
    )


def admit_files(
    paths: Sequence[Path],
    registry: Registry,
    mode: RunMode,
    *,
    suite: str,
    source: Callable[[Path], str] = str,
    config: EvalConfig | None = None,
    agent: AgentUnderTest | None = None,
    gate: bool = False,
) -> list[Case]:
    """Admit every file of ``paths``, or raise :class:`SuiteLoadError` listing every
    refusal. ``suite`` names them in that error; ``source(path)`` names each case;
    with ``config``, scripted calls are held to its tool offer, unless ``agent``
    brings its own tools; ``agent`` may refuse what it cannot certify. With ``gate``
    (the cases join a required gate), a vacuous case (:func:`vacuity`) is refused
    too: a case a run doing nothing passes certifies nothing.
    """
    from zeroclaw_eval.case.offer import check_offer, offered_names

    own_tools = agent is not None and agent.own_tools
    offered = offered_names(config, registry.tools) if config and not own_tools else None
    offer_key = config.offer_key if config else ""
    cases: list[Case] = []
    problems: list[str] = []
    refused = 0
    for path in paths:
        try:
            case = admit_file(path, registry, mode, source=source(path), agent=agent)
            if offered is not None:
                check_offer(case, offered, registry.tools, offer_key)
            if gate and (vacuous := vacuity(case)) is not None:
                raise AdmissionError(case.source, "expects", vacuous.reason(gating=True))
            cases.append(case)
        except AdmissionError as exc:
            refused += 1
            problems.extend(exc.lines)
    if problems:
        raise SuiteLoadError(
            f"suite {suite}: {plural(refused, 'fixture')} refused "
            f"(of {len(paths)}); no case was run",
            problems,
        )
    return cases


class Vacuity(NamedTuple):
    """Why a case certifies nothing: an empty run passes every one of its checks."""

    case: Case
    checks: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.case.source}: expects: {self.reason()}"

    def reason(self, *, gating: bool = False) -> str:
        """Why the case is vacuous; with ``gating``, also why the gate refuses it."""
        listed = ", ".join(self.checks)
        reason = (
            f"vacuous: a run that does nothing passes all "
            f"{plural(len(self.checks), 'check')} ({listed}); add an expectation that "
            "only the intended behaviour satisfies"
        )
        if gating:
            reason += " (a gating run refuses it; a non-gating one, --no-gate, runs it and says so)"
        return reason


def vacuity(case: Case) -> Vacuity | None:
    """The :class:`Vacuity` of a case that an empty run satisfies, else ``None``.

    A case that certifies a behaviour must fail at least one check against a run
    with no response, no calls and no tokens.
    """
    if case.idle_fails:  # found at admission, which grades such a run anyway
        return None
    checks = case.grade(empty_run())
    if any(not check.passed for check in checks):
        return None
    return Vacuity(case, tuple(check.check for check in checks))
