"""The trend page's text a person reads without hovering: the last run's axis label
inside the chart, and each failing case's latest failure listed under the grid."""

from __future__ import annotations

from pathlib import Path

from .test_trend_page import HOSTILE, page, rendered

__all__ = ["page"]  # the fixture, used by name


def test_the_last_axis_label_is_inside_the_chart(page: Path, tmp_path: Path) -> None:
    (svg,) = rendered(page, tmp_path).all("svg")
    width = float(svg.attrs["width"])
    labels = [text for text in svg.all("text") if text.full_text().startswith("#")]
    assert [label.full_text() for label in labels] == ["#1", "#2", "#3"]
    assert all(label.attrs["text-anchor"] == "middle" for label in labels)
    # Centred on its point, "#3" needs about 10 px either side at 11 px.
    assert float(labels[-1].attrs["x"]) <= width - 20


def test_failure_reasons_are_on_the_page_not_only_on_hover(page: Path, tmp_path: Path) -> None:
    dom = rendered(page, tmp_path)
    (failures,) = [div for div in dom.all("div") if div.attrs.get("id") == "failures"]
    items = {li.attrs["data-case"]: li.full_text() for li in failures.all("li")}
    assert items == {
        "wobbly": f"wobbly, run #3 (0/2 passed): attempt 1: response_contains: {HOSTILE}; "
        f"attempt 2: response_contains: {HOSTILE}",
        "late": f"late, run #2 (0/2 passed): attempt 1: response_contains: {HOSTILE}; "
        f"attempt 2: response_contains: {HOSTILE}",
    }
    assert not [b for b in dom.all("b") if b.attrs.get("id") == "injected"]
