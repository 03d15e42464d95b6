"""The HTML trend page, loaded in a real headless Chromium: the assertions are on the
DOM the page's own script built, not only on the file's text.

Chromium comes from Debian's ``chromium`` package (``.ci/run`` installs it). Without
it the browser test is skipped locally and fails in CI (``CI`` set).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import zeroclaw
from zeroclaw_eval.history.store import RunInfo, open_history
from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport
from zeroclaw_eval.util.stats import wilson_interval

HOSTILE = 'observed "</script><b id=injected>x</b>"'


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    text: str = ""

    def all(self, tag: str) -> list[Node]:
        found = [self] if self.tag == tag else []
        for child in self.children:
            found.extend(child.all(tag))
        return found

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def full_text(self) -> str:
        return self.text + "".join(child.full_text() for child in self.children)


class Tree(HTMLParser):
    VOID = frozenset({"meta", "br", "img", "input", "link", "hr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].text += data


def parse(document: str) -> Node:
    tree = Tree()
    tree.feed(document)
    return tree.root


def add_run(path: Path, cases: dict[str, list[bool]], commit: str) -> int:
    reports = []
    for name, outcomes in cases.items():
        attempts = [
            CaseReport(name, f"{name}.json", (CheckResult("response_contains", ok, HOSTILE),))
            for ok in outcomes
        ]
        reports.append(CaseReport.of_attempts(attempts))
    report = SuiteReport("evals/capability", tuple(reports), config_digest="d", repeats=2)
    with open_history(path) as history:
        return history.append(report, RunInfo("2026-12-01T10:00:00Z", 1.0, git_commit=commit))


@pytest.fixture
def page(tmp_path: Path) -> Path:
    history = tmp_path / "history.sqlite"
    add_run(history, {"steady": [True, True], "wobbly": [True, True]}, "a" * 40)
    add_run(
        history, {"steady": [True, True], "wobbly": [True, False], "late": [False, False]}, "b" * 40
    )
    add_run(
        history, {"steady": [True, True], "wobbly": [False, False], "late": [True, True]}, "c" * 40
    )
    target = tmp_path / "trend.html"
    result = zeroclaw("eval", "history", "--history", history, "--html", target)
    assert result.returncode == 0, result.stderr
    assert f"wrote {target} (3 runs of evals/capability)" in result.stderr
    return target


def test_the_file_is_self_contained_and_draws_nothing_by_itself(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    document = parse(text)
    (csp,) = [
        m for m in document.all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"
    ]
    assert csp.attrs["content"].startswith("default-src 'none';")
    assert not document.all("link") and not document.all("img") and not document.all("iframe")
    assert all("src" not in script.attrs for script in document.all("script"))
    # The chart and the grid exist only once the page's script has run.
    assert not document.all("svg") and not document.all("td")
    assert "<b id=injected>" not in text  # the data cannot end its <script> early


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed (apt-get install -y chromium)")
    pytest.skip("chromium is not installed (apt-get install -y chromium)")


def headless_chromium(profile: Path) -> list[str]:
    """Headless Chromium, offline and quiet, with its own profile directory."""
    return [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
    ]


def rendered(page: Path, tmp_path: Path) -> Node:
    """The DOM after the page's script ran, as headless Chromium serializes it."""
    result = subprocess.run(
        [*headless_chromium(tmp_path / "profile"), "--dump-dom", page.resolve().as_uri()],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "<svg" in result.stdout, result.stdout[:500]
    return parse(result.stdout)


def test_the_browser_draws_the_rate_band_and_the_grid(page: Path, tmp_path: Path) -> None:
    dom = rendered(page, tmp_path)
    (summary,) = [p for p in dom.all("p") if p.attrs.get("id") == "summary"]
    assert summary.full_text() == "3 runs, 3 cases; shaded: 95 % Wilson interval"

    (svg,) = dom.all("svg")
    points = svg.all("circle")
    assert [c.attrs["data-run"] for c in points] == ["1", "2", "3"]
    # Passing attempts over attempts: 4/4, 3/6, 4/6.
    assert [float(c.attrs["data-rate"]) for c in points] == pytest.approx(
        [1.0, 0.5, 0.6667], abs=1e-4
    )
    titles = [c.all("title")[0].full_text() for c in points]
    low, high = wilson_interval(3, 6)
    assert titles[1] == (
        f"run 2 (2026-12-01T10:00:00Z, bbbbbbbbbb): 3/6 attempts passed, "
        f"interval [{low:.2f}, {high:.2f}]"
    )
    (band,) = [p for p in svg.all("polygon") if "band" in p.classes()]
    assert len(band.attrs["points"].split()) == 6  # upper and lower edge, 3 runs each
    (line,) = svg.all("polyline")
    assert len(line.attrs["points"].split()) == 3
    # Higher on the chart is a higher rate: run 1 (100 %) above run 2 (50 %).
    assert (
        float(points[0].attrs["cy"]) < float(points[2].attrs["cy"]) < float(points[1].attrs["cy"])
    )

    (table,) = dom.all("table")
    rows = [row for row in table.all("tr") if "case-row" in row.classes()]
    by_case = {row.attrs["data-case"]: row for row in rows}
    assert list(by_case) == ["steady", "wobbly", "late"]
    outcomes = {
        name: [cell.attrs["class"] for cell in row.all("td")] for name, row in by_case.items()
    }
    assert outcomes == {
        "steady": ["pass", "pass", "pass"],
        "wobbly": ["pass", "flaky", "fail"],
        "late": ["absent", "fail", "pass"],
    }
    assert "flaky" in by_case["wobbly"].classes() and "flaky" not in by_case["steady"].classes()
    marks = [span.full_text() for span in by_case["wobbly"].all("span")]
    assert marks == ["flaky"]
    flaky_cell = by_case["wobbly"].all("td")[1]
    assert flaky_cell.full_text() == "1/2"
    # The hover text holds each failed attempt's check messages, as text, not markup.
    assert flaky_cell.attrs["title"] == (
        f"run 2: 1/2 passed\nattempt 2: response_contains: {HOSTILE}"
    )
    assert not [b for b in dom.all("b") if b.attrs.get("id") == "injected"]
