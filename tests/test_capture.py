"""The capture record a recorded or imported fixture carries: admitted strictly, and
worded for the report as what the replay reproduced and what was never observed."""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_eval import AdmissionError, Registry, RunMode
from zeroclaw_eval.case.admission import admit_data
from zeroclaw_eval.case.fixture import Capture

from .conftest import echo_case

CAPTURE: dict[str, Any] = {
    "made_by": "import",
    "sources": ["trace 0af7651916cd43dd8448eb211c80319c", "openinference.instrumentation 0.1"],
    "observed": ["replies", "requests", "tool_offer", "tool_results"],
}


def with_capture(registry: Registry, replay: RunMode, capture: Any) -> Capture | None:
    case = echo_case(capture=capture)
    return admit_data(case, registry, replay, source="suite/case.json").trace.capture


def test_a_capture_record_is_admitted_with_its_defaults(registry: Registry, replay: RunMode):
    capture = with_capture(registry, replay, CAPTURE)

    assert capture is not None
    assert capture.results_missing == []
    assert capture.draft_expects == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"observed": ["replies", "side_effects"]}, 'capture.observed[1]="side_effects"'),
        ({"sources": []}, "capture.sources"),
        ({"sources": [""]}, 'capture.sources[0]=""'),
        ({"made_by": "hand"}, 'capture.made_by="hand"'),
        ({"results_missing": [""]}, 'capture.results_missing[0]=""'),
        ({"draft_expects": [""]}, 'capture.draft_expects[0]=""'),
        ({"seen": ["everything"]}, "capture.seen"),
    ],
)
def test_a_capture_record_is_held_to_its_shape(
    registry: Registry, replay: RunMode, change: dict[str, Any], field: str
):
    with pytest.raises(AdmissionError) as refused:
        with_capture(registry, replay, {**CAPTURE, **change})

    assert refused.value.field == field


def test_the_summary_says_what_was_reproduced_and_what_was_not_observed():
    capture = Capture.model_validate(CAPTURE)

    assert capture.summary() == (
        "sequence reproduced (made by import from trace 0af7651916cd43dd8448eb211c80319c; "
        "openinference.instrumentation 0.1; observed: replies, requests, tool_offer, "
        "tool_results); "
        "not observed: tool side effects"
    )


def test_the_summary_names_the_tools_whose_results_were_never_seen():
    capture = Capture.model_validate(
        {
            **CAPTURE,
            "made_by": "record",
            "sources": ["zeroclaw-eval 0.1.0 record"],
            "observed": [],
            "results_missing": ["weather", "search"],
        }
    )

    assert capture.summary() == (
        "sequence reproduced (made by record from zeroclaw-eval 0.1.0 record); "
        "not observed: tool side effects, results of weather, search"
    )
