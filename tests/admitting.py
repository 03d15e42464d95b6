"""Admitting a fixture in process, for the families' admission and ``eval check`` tests."""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_eval import AdmissionError, Registry, RunMode
from zeroclaw_eval.case.admission import admit_data
from zeroclaw_eval.case.consistency import inconsistencies


def refusal(data: dict[str, Any], registry: Registry, replay: RunMode, agent: Any = None) -> str:
    """``field: message`` of the refusal admitting ``data`` must raise (for ``agent``)."""
    with pytest.raises(AdmissionError) as refused:
        admit_data(data, registry, replay, source="case.json", agent=agent)
    return f"{refused.value.field}: {refused.value.message}"


def findings(data: dict[str, Any], registry: Registry, replay: RunMode) -> list[str]:
    """What ``eval check`` finds the script of ``data`` can never satisfy (errors only),
    for an agent that passes the script's text through."""
    admitted = admit_data(data, registry, replay, source="case.json")
    return [str(problem) for problem in inconsistencies(admitted, True) if problem.error]
