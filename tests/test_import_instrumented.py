"""A real agent run, traced by a real OpenTelemetry SDK and a real instrumentation,
becomes fixtures that replay to the same verdicts.

The notes agent of examples/agents/openai_sdk (its own tools, the ``openai`` client)
runs the shipped suite as a command through the model bridge, instrumented by the
official ``opentelemetry-instrumentation-openai-v2`` (GenAI conventions) or by
``openinference-instrumentation-openai``; the SDK's OTel file exporter writes the
spans as OTLP JSON. ``zeroclaw eval import`` turns that file into drafts, which
``eval check`` admits and which the same agent, untraced, replays green: with every
request it makes as the trace stored it (drift is compared, not turned off).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .conftest import PROJECT, zeroclaw

NOTES = PROJECT / "examples" / "agents" / "openai_sdk"
TRACED = PROJECT / "tests" / "agents" / "traced_notes_agent.py"

#: What each instrumentation needs to put the messages on its spans.
CAPTURE = {
    "openai-v2": {
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    },
    "openinference": {},
}

SOURCES = {
    "openai-v2": "opentelemetry.util.genai.handler",
    "openinference": "openinference.instrumentation.openai",
}


def agent_config(path: Path, suite: Path, script: Path) -> Path:
    path.write_text(
        f'[eval]\nsuite_dir = "{suite.as_posix()}"\n\n'
        f'[eval.agent]\ncommand = ["{Path(sys.executable).as_posix()}", "{script.as_posix()}"]\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("instrumentation", sorted(CAPTURE))
def test_an_instrumented_run_imports_and_replays_to_the_same_verdicts(
    tmp_path: Path, instrumentation: str
) -> None:
    trace = tmp_path / "trace.jsonl"
    traced = agent_config(tmp_path / "traced.toml", NOTES / "suite", TRACED)
    env = {
        "TRACE_FILE": str(trace),
        "TRACED_INSTRUMENTATION": instrumentation,
        **CAPTURE[instrumentation],
    }
    original = zeroclaw("eval", "run", "--config", traced, "--format", "json", env=env)
    assert original.returncode == 0, original.stderr
    before = {
        json.loads((NOTES / "suite" / Path(case["source"]).name).read_text("utf-8"))["turns"][0][
            "user_input"
        ]: case["passed"]
        for case in json.loads(original.stdout)["cases"]
    }
    assert list(before.values()) == [True] * 4

    drafts = tmp_path / "drafts"
    notes = agent_config(tmp_path / "notes.toml", drafts, NOTES / "notes_agent.py")
    imported = zeroclaw(
        "eval", "import", trace, "--out", drafts, "--tools", "agent", "--config", notes
    )

    assert imported.returncode == 0, imported.stderr
    assert "Error" not in imported.stderr
    # Scripted results would sit unused beside the tools this agent runs itself.
    scripted = zeroclaw("eval", "import", trace, "--out", tmp_path / "s", "--config", notes)
    assert scripted.returncode == 1
    assert scripted.stderr.startswith("Error: agent 'command ")
    assert "runs its own tools, so their results cannot be scripted" in scripted.stderr
    written = {path: json.loads(path.read_text("utf-8")) for path in sorted(drafts.glob("*.json"))}
    assert len(written) == 4
    for document in written.values():
        assert document["capture"]["made_by"] == "import"
        assert document["capture"]["sources"][1].startswith(SOURCES[instrumentation])
        assert "requests" in document["capture"]["observed"]
        assert all("request" in step for turn in document["turns"] for step in turn["steps"])
    checked = zeroclaw("eval", "check", "--config", notes)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    replayed = zeroclaw("eval", "run", "--config", notes, "--format", "json")

    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    cases = json.loads(replayed.stdout)["cases"]
    after = {
        written[drafts / Path(case["source"]).name]["turns"][0]["user_input"]: case["passed"]
        for case in cases
    }
    assert after == before
    for case in cases:  # the stored requests were compared, and matched
        drift = [check for check in case["checks"] if check["check"].startswith("drift")]
        assert drift, case["checks"]
        assert drift[0]["detail"] == "every live request is as recorded"
        assert case["capture"].startswith("sequence reproduced (made by import")


def test_the_scripted_import_replays_with_the_reference_agent(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    traced = agent_config(tmp_path / "traced.toml", NOTES / "suite", TRACED)
    env = {"TRACE_FILE": str(trace), "TRACED_INSTRUMENTATION": "openai-v2", **CAPTURE["openai-v2"]}
    assert zeroclaw("eval", "run", "--config", traced, env=env).returncode == 0

    drafts = tmp_path / "drafts"
    imported = zeroclaw("eval", "import", trace, "--out", drafts, "--no-requests", cwd=tmp_path)

    assert imported.returncode == 0, imported.stderr
    # The notes agent's own tools become scripted results for the reference loop.
    scripted = {
        name
        for path in drafts.glob("*.json")
        for name in json.loads(path.read_text("utf-8")).get("tool_results", {})
    }
    assert scripted == {"echo", "read_note", "write_note"}
    assert zeroclaw("eval", "check", drafts, cwd=tmp_path).returncode == 0
    replayed = zeroclaw("eval", "run", "--suite", drafts, cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "4/4 cases passed" in replayed.stdout
