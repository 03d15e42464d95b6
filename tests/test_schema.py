"""``zeroclaw eval schema``: a draft 2020-12 schema every admitted fixture satisfies.

The schema may be looser than admission, never stricter: every shipped fixture is
valid against it, and every fixture it rejects (mutations of real fixtures, the
table of admission refusals) is refused by admission too.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from zeroclaw_eval import Registry, RunMode
from zeroclaw_eval.case.admission import admit_data
from zeroclaw_eval.case.schema import DRAFT
from zeroclaw_eval.errors import AdmissionError

from .cli_process import assert_clean_errors, json_report
from .conftest import PROJECT, echo_case, zeroclaw
from .test_admission import REFUSALS

SHIPPED = sorted([*PROJECT.glob("evals/*/*.json"), *PROJECT.glob("tests/conformance/*/*.json")])


def printed_schema(*args: str) -> dict[str, Any]:
    result = zeroclaw("eval", "schema", *args)
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return printed_schema()


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(schema)


def require_json_response_plugin() -> None:
    """The response_json family comes from an installed example plugin: fail in CI
    when it is missing, skip elsewhere."""
    try:
        distribution("zeroclaw-eval-json-response")
    except PackageNotFoundError:
        message = "pip install -e plugins/zeroclaw-eval-json-response"
        if os.environ.get("CI") or os.environ.get("ZEROCLAW_EVAL_REQUIRE_PLUGINS"):
            pytest.fail(message)
        pytest.skip(message)


def admitted(data: Any, registry: Registry, replay: RunMode) -> bool:
    try:
        admit_data(data, registry, replay, source="mutant.json")
    except AdmissionError:
        return False
    return True


def test_the_schema_is_a_valid_draft_2020_12_document(schema: dict[str, Any]) -> None:
    assert schema["$schema"] == DRAFT
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(schema["required"]) == {"model_name", "turns", "expects"}
    assert schema["additionalProperties"] is False
    families = schema["properties"]["expects"]["properties"]
    assert {"response_contains", "exact_tool_calls", "tool_results_contain"} <= set(families)
    assert (
        "the final response contains each substring"
        in (families["response_contains"]["description"])
    )


def test_shipped_fixtures_are_many() -> None:
    assert len(SHIPPED) >= 50, SHIPPED


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: str(path.relative_to(PROJECT)))
def test_every_shipped_fixture_is_valid_against_the_schema(
    path: Path, validator: jsonschema.protocols.Validator
) -> None:
    errors = [error.message for error in validator.iter_errors(json.loads(path.read_text()))]
    assert errors == []


def test_an_installed_plugin_family_is_in_the_schema_and_blocking_it_removes_it(
    validator: jsonschema.protocols.Validator,
) -> None:
    require_json_response_plugin()
    case = echo_case(expects={"response_json": {"/status": "ok"}, "tools_used": ["echo"]})
    assert validator.is_valid(case)
    assert not validator.is_valid(echo_case(expects={"response_json": ["/status"]}))
    assert not validator.is_valid(echo_case(expects={"response_json": {}}))

    without = printed_schema("-p", "no:response_json")
    assert "response_json" not in without["properties"]["expects"]["properties"]
    assert not jsonschema.Draft202012Validator(without).is_valid(case)


def test_a_schema_key_is_admitted_and_ignored(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    case = {"$schema": "../fixture.schema.json", **echo_case()}
    (suite / "case.json").write_text(json.dumps(case), encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json_report(result)["passed"] == 1


@pytest.mark.parametrize(
    ("case", "field"),
    [
        ({"$schema": 7, **echo_case()}, "$schema=7"),
        ({"$schema": None, **echo_case()}, "$schema=null"),
        # Only at the top level: elsewhere it is an unknown key like any other.
        (
            echo_case(expects={"$schema": "x", "exact_tool_calls": 1}),
            "expects.$schema: unknown key",
        ),
    ],
)
def test_a_schema_key_that_is_not_a_top_level_string_is_refused(
    case: dict[str, Any],
    field: str,
    tmp_path: Path,
    validator: jsonschema.protocols.Validator,
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "case.json").write_text(json.dumps(case), encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite)
    assert result.returncode == 1
    assert f"case.json: {field}" in assert_clean_errors(result.stderr)[1]
    assert not validator.is_valid(case)


# --- never stricter than admission -------------------------------------------------

REPLACEMENTS: tuple[Any, ...] = (None, True, False, 0, -1, 2, 1.5, "", "x", [], ["x"], {}, {"z": 1})


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside a JSON document, the root excluded."""
    children: Any = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in children:
        yield (*prefix, key)
        yield from paths(child, (*prefix, key))


def mutants(document: dict[str, Any]) -> Iterator[Any]:
    """The document with one value replaced, one key deleted or one key added, everywhere."""
    for path in list(paths(document)):
        for replacement in REPLACEMENTS:
            mutant = copy.deepcopy(document)
            parent = mutant
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = replacement
            yield mutant
        mutant = copy.deepcopy(document)
        parent = mutant
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
        yield mutant
        if isinstance(parent, dict):
            mutant = copy.deepcopy(document)
            parent = mutant
            for key in path[:-1]:
                parent = parent[key]
            parent["unexpected"] = 1
            yield mutant


SEEDS = {
    "echo_case": echo_case(),
    "boundary_entries": echo_case(
        expects={
            "tool_arguments_contain": [{"tool": "echo", "needle": "hello", "call_index": 0}],
            "max_tool_calls": 2,
            "response_matches": ["h.llo"],
        }
    ),
    **{
        path.stem: json.loads(path.read_text())
        for path in SHIPPED
        if path.stem in ("multi_turn_batched_calls_across_turns", "response_ticket_id_anchored")
    },
}


@pytest.mark.parametrize("seed", SEEDS)
def test_every_mutant_the_schema_rejects_admission_refuses(
    seed: str,
    validator: jsonschema.protocols.Validator,
    registry: Registry,
    replay: RunMode,
) -> None:
    rejected = accepted = 0
    for mutant in mutants(SEEDS[seed]):
        if validator.is_valid(mutant):
            accepted += 1
            continue
        rejected += 1
        assert not admitted(mutant, registry, replay), json.dumps(mutant)
    # Neither side vacuous: the schema rejects many mutants and accepts many.
    assert rejected > 50 and accepted > 20, (rejected, accepted)


def test_every_admission_refusal_the_schema_rejects_is_refused_and_it_catches_keys(
    validator: jsonschema.protocols.Validator, registry: Registry, replay: RunMode
) -> None:
    caught = []
    for name, (fixture, _, says) in REFUSALS.items():
        try:
            data = json.loads(fixture) if isinstance(fixture, str) else fixture
        except ValueError:
            continue  # not JSON: no schema can say anything about it
        if validator.is_valid(data):
            continue
        assert not admitted(data, registry, replay), name
        caught.append(name)
        assert says
    # What an editor should flag as it is typed: unknown and missing keys.
    structural = [
        name
        for name, (fixture, _, says) in REFUSALS.items()
        if not isinstance(fixture, str) and ("unknown key" in says or "required" in says)
    ]
    assert structural
    assert set(structural) <= set(caught), sorted(set(structural) - set(caught))
