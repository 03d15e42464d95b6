"""The trend page: one self-contained HTML file drawn from the run history.

The page holds its data as JSON and a small script that draws, in the browser,
an inline SVG chart of the suite's pass rate per run with its 95 % Wilson band
(and, dashed, the mean trajectory score of the runs whose checks have one),
and a grid of cases by runs coloured by outcome (passed, failed, flaky: the
attempts of one run disagreed), each cell's check messages in its tooltip; and,
for runs against a real provider, what each run spent (tokens and cost, ``n/a``
where a figure was missing) beside its pass rate. No
network: no external script, style, font or image, and a Content-Security-Policy
that forbids fetching any.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from zeroclaw_eval.history.spend import spend
from zeroclaw_eval.history.store import Attempt, Run
from zeroclaw_eval.util.stats import wilson_interval


def page_data(suite: str, runs: Sequence[Run], attempts: Sequence[Attempt]) -> dict[str, Any]:
    """What the page draws: per run (oldest first) its pass rate and band, and per
    case its outcome in each run."""
    by_run: dict[int, list[Attempt]] = {}
    for attempt in attempts:
        by_run.setdefault(attempt.run_id, []).append(attempt)
    run_rows = []
    cases: dict[str, dict[str, Any]] = {}
    for column, run in enumerate(runs):
        mine = by_run.get(run.id, [])
        passes = sum(1 for attempt in mine if attempt.passed)
        low, high = wilson_interval(passes, len(mine))
        scores = [score for attempt in mine for score in attempt.scores]
        run_rows.append(
            {
                "id": run.id,
                "started_at": run.started_at,
                "commit": (run.git_commit or "")[:10] + ("+" if run.git_dirty else ""),
                "passes": passes,
                "attempts": len(mine),
                "rate": passes / len(mine) if mine else 0.0,
                "low": low,
                "high": high,
                "verdict": run.verdict,
                # The mean trajectory score of the run's checks that have one.
                "score": round(sum(scores) / len(scores), 4) if scores else None,
                "spend": None if (spent := spend(mine)) is None else spent.document(),
            }
        )
        for attempt in mine:
            case = cases.setdefault(
                attempt.case_name, {"name": attempt.case_name, "flaky": False, "cells": {}}
            )
            cell = case["cells"].setdefault(str(column), {"passes": 0, "attempts": 0, "why": []})
            cell["attempts"] += 1
            cell["passes"] += attempt.passed
            if not attempt.passed:
                cell["why"].append(f"attempt {attempt.attempt + 1}: {_why(attempt)}")
    for case in cases.values():
        for cell in case["cells"].values():
            cell["outcome"] = (
                "pass"
                if cell["passes"] == cell["attempts"]
                else "fail"
                if cell["passes"] == 0
                else "flaky"
            )
            case["flaky"] = case["flaky"] or cell["outcome"] == "flaky"
    return {"suite": suite, "runs": run_rows, "cases": list(cases.values())}


def _why(attempt: Attempt) -> str:
    if attempt.error is not None:
        return f"error: {attempt.error}"
    failing = [f"{check}: {detail}" for check, passed, detail in attempt.checks if not passed]
    return "; ".join(failing) or "failed"


def trend_page(suite: str, runs: Sequence[Run], attempts: Sequence[Attempt]) -> str:
    """The whole HTML document for ``runs`` (oldest first) of ``suite``."""
    data = json.dumps(page_data(suite, runs, attempts), ensure_ascii=False)
    # Inside <script>, only "</" could end the element early: escape every "<".
    data = data.replace("<", "\\u003c")
    title = html.escape(f"zeroclaw-eval history: {suite}")
    before, after = _TEMPLATE.split("{data}")
    return before.replace("{title}", title) + data + after


_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<title>{title}</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; }
h2 { font-size: 1.1em; margin-top: 1.2em; }
#chart .band { fill: #9ecae1; opacity: 0.5; }
#chart .rate { fill: none; stroke: #08519c; stroke-width: 2; }
#chart .point { fill: #08519c; }
#chart .score { fill: none; stroke: #6a51a3; stroke-width: 2; stroke-dasharray: 5 3; }
#chart .axis { stroke: #888; }
#chart text { font-size: 11px; fill: #555; }
table { border-collapse: collapse; margin-top: 1em; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: center; }
th.case { text-align: left; font-weight: normal; }
td.pass { background: #a1d99b; }
td.fail { background: #fc9272; }
td.flaky { background: #fdd0a2; }
td.absent { background: #f0f0f0; }
.flaky-mark { color: #d94801; font-weight: bold; margin-left: 0.5em; }
.legend { color: #555; }
.swatch { padding: 0 4px; margin: 0 2px; }
.swatch.pass { background: #a1d99b; }
.swatch.flaky { background: #fdd0a2; }
.swatch.fail { background: #fc9272; }
.swatch.absent { background: #f0f0f0; }
</style>
</head>
<body>
<h1>{title}</h1>
<p id="summary"></p>
<div id="chart"></div>
<div id="spend"></div>
<div id="grid"></div>
<div id="failures"></div>
<p class="legend">Cells: passes/attempts in that run.
<span class="swatch pass">every attempt passed</span>
<span class="swatch flaky">flaky: the attempts disagreed</span>
<span class="swatch fail">every attempt failed</span>
<span class="swatch absent">not in the run</span>.
Hover a cell for its failed checks, a point for its run; each failing case's latest
failure is listed below the grid.</p>
<script id="trend-data" type="application/json">{data}</script>
<script>
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("trend-data").textContent);
  var runs = data.runs;
  var SVG = "http://www.w3.org/2000/svg";
  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (parent) { parent.appendChild(node); }
    return node;
  }
  document.getElementById("summary").textContent =
    runs.length + " runs, " + data.cases.length + " cases; shaded: 95 % Wilson interval" +
    (runs.some(function (r) { return r.score !== null; })
      ? "; dashed: mean trajectory score" : "");

  // The right margin holds half of the last run's label, which is centred on its point.
  var width = 760, height = 240, left = 40, right = 30, top = 10, bottom = 30;
  var svg = el("svg", {width: width, height: height, role: "img",
                       "aria-label": "pass rate per run"});
  function x(i) {
    return runs.length < 2 ? left + (width - left - right) / 2
                           : left + i * (width - left - right) / (runs.length - 1);
  }
  function y(rate) { return top + (1 - rate) * (height - top - bottom); }
  el("line", {"class": "axis", x1: left, y1: y(0), x2: width - right, y2: y(0)}, svg);
  el("line", {"class": "axis", x1: left, y1: y(0), x2: left, y2: y(1)}, svg);
  [0, 0.5, 1].forEach(function (tick) {
    var label = el("text", {x: 4, y: y(tick) + 4}, svg);
    label.textContent = Math.round(tick * 100) + "%";
  });
  var upper = runs.map(function (r, i) { return x(i) + "," + y(r.high); });
  var lower = runs.map(function (r, i) { return x(i) + "," + y(r.low); }).reverse();
  el("polygon", {"class": "band", points: upper.concat(lower).join(" ")}, svg);
  el("polyline", {"class": "rate", points: runs.map(function (r, i) {
    return x(i) + "," + y(r.rate); }).join(" ")}, svg);
  var scored = runs.map(function (r, i) { return r.score === null ? null : [i, r.score]; })
    .filter(function (p) { return p !== null; });
  if (scored.length) {
    var line = el("polyline", {"class": "score", points: scored.map(function (p) {
      return x(p[0]) + "," + y(p[1]); }).join(" ")}, svg);
    el("title", {}, line).textContent = "mean trajectory score per run (never gates)";
  }
  runs.forEach(function (r, i) {
    var point = el("circle", {"class": "point", cx: x(i), cy: y(r.rate), r: 4,
                              "data-run": r.id, "data-rate": r.rate.toFixed(4)}, svg);
    el("title", {}, point).textContent = "run " + r.id + " (" + r.started_at + ", " +
      (r.commit || "no commit") + "): " + r.passes + "/" + r.attempts + " attempts passed, " +
      "interval [" + r.low.toFixed(2) + ", " + r.high.toFixed(2) + "]" +
      (r.score === null ? "" : ", mean trajectory score " + r.score.toFixed(2));
    var label = el("text", {x: x(i), y: height - 10, "text-anchor": "middle"}, svg);
    label.textContent = "#" + r.id;
  });
  document.getElementById("chart").appendChild(svg);

  // What each run spent, beside its pass rate: only runs against a real provider
  // have a spend; a figure a request did not report is n/a, never 0.
  function figure(value) { return value === null ? "n/a" : String(value); }
  if (runs.some(function (r) { return r.spend; })) {
    var spent = document.createElement("table");
    spent.id = "spend-table";
    var header = spent.insertRow();
    ["run", "pass rate", "input tokens", "output tokens", "cached input", "reasoning",
     "cost"].forEach(function (label) {
      var th = document.createElement("th");
      th.textContent = label;
      header.appendChild(th);
    });
    runs.forEach(function (r) {
      var row = spent.insertRow();
      row.setAttribute("data-run", r.id);
      var s = r.spend;
      ["#" + r.id, r.passes + "/" + r.attempts,
       s ? figure(s.input_tokens) : "not measured", s ? figure(s.output_tokens) : "",
       s ? figure(s.cached_input_tokens) : "", s ? figure(s.reasoning_tokens) : "",
       s ? figure(s.cost) : ""].forEach(function (text) {
        row.insertCell().textContent = text;
      });
    });
    document.getElementById("spend").appendChild(spent);
  }

  var table = document.createElement("table");
  var head = table.insertRow();
  var corner = document.createElement("th");
  corner.textContent = "case";
  head.appendChild(corner);
  runs.forEach(function (r) {
    var th = document.createElement("th");
    th.textContent = "#" + r.id;
    th.title = r.started_at + " " + (r.commit || "");
    head.appendChild(th);
  });
  data.cases.forEach(function (c) {
    var row = table.insertRow();
    row.className = c.flaky ? "case-row flaky" : "case-row";
    row.setAttribute("data-case", c.name);
    var name = document.createElement("th");
    name.className = "case";
    name.textContent = c.name;
    if (c.flaky) {
      var mark = document.createElement("span");
      mark.className = "flaky-mark";
      mark.textContent = "flaky";
      name.appendChild(mark);
    }
    row.appendChild(name);
    runs.forEach(function (r, i) {
      var cell = row.insertCell();
      var outcome = c.cells[String(i)];
      if (!outcome) {
        cell.className = "absent";
        cell.title = "not in run " + r.id;
        return;
      }
      cell.className = outcome.outcome;
      cell.textContent = outcome.passes + "/" + outcome.attempts;
      cell.title = "run " + r.id + ": " + outcome.passes + "/" + outcome.attempts + " passed" +
        (outcome.why.length ? "\\n" + outcome.why.join("\\n") : "");
    });
  });
  document.getElementById("grid").appendChild(table);

  // Why each failing case failed last, as text on the page, not only on hover.
  var list = document.createElement("ul");
  data.cases.forEach(function (c) {
    for (var i = runs.length - 1; i >= 0; i--) {
      var outcome = c.cells[String(i)];
      if (outcome && outcome.outcome !== "pass") {
        var item = document.createElement("li");
        item.setAttribute("data-case", c.name);
        item.textContent = c.name + ", run #" + runs[i].id + " (" + outcome.passes + "/" +
          outcome.attempts + " passed): " +
          (outcome.why.length ? outcome.why.join("; ") : "no reason recorded");
        list.appendChild(item);
        return;
      }
    }
  });
  if (list.children.length) {
    var heading = document.createElement("h2");
    heading.textContent = "Latest failure of each failing case";
    var failures = document.getElementById("failures");
    failures.appendChild(heading);
    failures.appendChild(list);
  }
})();
</script>
</body>
</html>
"""
