"""The site's configuration table (docs/reference/configuration.md, written by
tools/docs_reference.py) names every key of the configuration models,
with its default, and no key they do not have."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

from zeroclaw_eval.config import AgentTable, EvalConfig, LiveConfig

from .conftest import PROJECT

SECTION = (PROJECT / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| `\[(eval(?:\.live|\.agent)?)\] (\w+)` \| (.*?) \| (.*) \|$", re.MULTILINE)
TABLES: dict[str, type[BaseModel]] = {
    "eval": EvalConfig,
    "eval.live": LiveConfig,
    "eval.agent": AgentTable,
}
SUBTABLES = {"live"}
"""Keys of ``[eval]`` that are tables of their own, documented key by key."""


def documented() -> dict[tuple[str, str], str]:
    """``(table, key) -> default cell`` for every row of the page's table."""
    rows = ROW.findall(SECTION)
    keys = [(table, key) for table, key, _, _ in rows]
    assert len(keys) == len(set(keys)), "a key is documented twice"
    return {(table, key): default for table, key, default, _ in rows}


def toml_literal(value: Any) -> str:
    """How a default is written in TOML: ``true``, ``"replay"``, ``300.0``, ``[]``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return json.dumps(value)
    if value == [] or value == {}:
        return json.dumps(value)
    raise AssertionError(f"no TOML spelling for the default {value!r}")


def test_every_key_of_the_models_is_in_the_table_and_no_other() -> None:
    in_models = {
        (table, key)
        for table, model in TABLES.items()
        for key in model.model_fields
        if not (table == "eval" and key in SUBTABLES)
    }
    assert set(documented()) == in_models


def test_every_default_is_the_models_default() -> None:
    cells = documented()
    for table, model in TABLES.items():
        for key, field in model.model_fields.items():
            if (table, key) not in cells:
                continue
            default = field.get_default(call_default_factory=True)
            cell = cells[table, key]
            if default is None:
                assert cell.startswith("none"), f"[{table}] {key}: {cell!r}"
            else:
                assert cell.startswith(f"`{toml_literal(default)}`"), f"[{table}] {key}: {cell!r}"
