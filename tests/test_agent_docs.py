"""docs/AGENTS.md and docs/RUN_RECORD.md stay true: every configuration key they
name exists with the default they give, their configuration examples load, the
async agent example runs through the bridge as written, and the run record's
tables list exactly the fields of the code."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from zeroclaw_eval.config import AgentTable, load_config
from zeroclaw_eval.grading.record import ModelRequest, RecordedCall, RunRecord

from .bridged_helpers import case_errors, run, write_suite
from .conftest import PROJECT

AGENTS = (PROJECT / "docs" / "AGENTS.md").read_text(encoding="utf-8")
RUN_RECORD = (PROJECT / "docs" / "RUN_RECORD.md").read_text(encoding="utf-8")
OWN_AGENT = (PROJECT / "docs" / "how-to" / "own-agent.md").read_text(encoding="utf-8")
WRITE_A_PLUGIN = (PROJECT / "docs" / "how-to" / "write-a-plugin.md").read_text(encoding="utf-8")


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


def test_the_own_agent_guide_links_the_page() -> None:
    assert "(../AGENTS.md)" in OWN_AGENT
    assert "(../RUN_RECORD.md)" in WRITE_A_PLUGIN


def test_every_configuration_example_loads_and_names_real_keys(tmp_path: Path) -> None:
    examples = blocks(AGENTS, "toml")
    assert len(examples) == 3
    defaults = 0
    for number, example in enumerate(examples):
        config = tmp_path / f"example{number}.toml"
        config.write_text(example, encoding="utf-8")
        loaded = load_config(config).config
        assert isinstance(loaded.agent, AgentTable)
        for key, value, note in re.findall(r"^(\w+) = (.+?)( +# the default)?$", example, re.M):
            assert key in AgentTable.model_fields, key
            if note:
                assert AgentTable.model_fields[key].default == float(value), key
                defaults += 1
    assert defaults == 2  # grace_s and first_reply_timeout_s


def test_every_key_named_in_the_text_is_a_key_of_the_agent_table() -> None:
    named = set(re.findall(r"`([a-z_]+_s|max_concurrency|factory|command|env)`", AGENTS))
    assert named <= {*AgentTable.model_fields, "case_timeout_s"}, named - set(
        AgentTable.model_fields
    )
    assert {"grace_s", "first_reply_timeout_s", "case_timeout_s"} <= named


def test_the_async_agent_example_runs_as_written(tmp_path: Path) -> None:
    example, _ = blocks(AGENTS, "python")
    project = tmp_path / "project"
    project.mkdir()
    (project / "doc_async_agent.py").write_text(example, encoding="utf-8")
    config = project / "zeroclaw.toml"
    config.write_text('[eval.agent]\nfactory = "doc_async_agent:make_agent"\n', encoding="utf-8")
    turns = [
        {"user_input": "Hi", "steps": [{"response": {"type": "text", "content": "hello"}}]},
        {"user_input": "Again", "steps": [{"response": {"type": "text", "content": "again"}}]},
    ]
    case = {"model_name": "async", "turns": turns, "expects": {"response_contains": ["again"]}}
    suite = write_suite(tmp_path / "suite", case)
    result = run(config, suite, "--format", "json")
    assert (result.exit_code, case_errors(result)) == (0, {"async": None}), result.stdout
    assert json.loads(result.stdout)["cases"][0]["passed"] is True


def test_the_dialect_plugin_example_registers_a_dialect_that_reads_its_forms() -> None:
    import types

    from zeroclaw_eval.agents.dialect import Shown
    from zeroclaw_eval.testing import run_cli

    _, example = blocks(AGENTS, "python")
    plugin = types.ModuleType("doc_dialect_plugin")
    exec(compile(example, "docs/AGENTS.md", "exec"), plugin.__dict__)
    listed = run_cli(["eval", "plugins"], plugin).stdout
    assert "dialects: my-stack" in listed
    stack = plugin.MY_STACK
    assert stack.shows("Result: 42", Shown("c1", "add", "42", True))
    assert stack.shows("Tool failed: no such city", Shown("c1", "city", "no such city", False))
    assert not stack.shows("Result: no such city", Shown("c1", "city", "no such city", False))


def table_fields(heading: str) -> list[str]:
    section = RUN_RECORD.split(f"\n## `{heading}`\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(\w+)(?:\(\w*\))?` \|", section, re.MULTILINE)


def public_surface(kind: type) -> list[str]:
    fields = [field.name for field in dataclasses.fields(kind)]
    extra = [
        name
        for name, value in vars(kind).items()
        if not name.startswith("_") and (isinstance(value, property) or callable(value))
    ]
    return fields + extra


def test_the_run_record_tables_list_exactly_the_fields_of_the_code() -> None:
    assert table_fields("RunRecord") == public_surface(RunRecord)
    assert table_fields("RecordedCall") == public_surface(RecordedCall)
    assert table_fields("ModelRequest") == public_surface(ModelRequest)
