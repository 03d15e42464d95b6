"""The "Write a plugin" walk-through (docs/how-to/write-a-plugin.md) runs as written:
module, entry point, tests."""

from __future__ import annotations

import inspect
import re
import sys
import types
from pathlib import Path

import pytest

from zeroclaw_eval import AdmissionError, hookspecs, vacuity
from zeroclaw_eval.testing import admit, fixture, make_registry

from .conftest import PROJECT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


def blocks(language: str) -> list[str]:
    page = (PROJECT / "docs" / "how-to" / "write-a-plugin.md").read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", page, re.S)


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The guide's plugin module, importable under the name its entry point gives."""
    (toml,) = blocks("toml")
    entry_points = tomllib.loads(toml)["project"]["entry-points"][hookspecs.PROJECT_NAME]
    ((name, module_name),) = entry_points.items()
    module = types.ModuleType(module_name)
    exec(compile(blocks("python")[0], "docs/how-to/write-a-plugin.md", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, module_name, module)
    assert make_registry(module).families["response_length"].plugin == module_name
    assert name == "response_length"
    return module


def test_the_readme_plugin_tests_pass(plugin: types.ModuleType, tmp_path: Path) -> None:
    namespace: dict[str, object] = {}
    exec(compile(blocks("python")[1], "docs/how-to/write-a-plugin.md", "exec"), namespace)
    tests = {name: test for name, test in namespace.items() if name.startswith("test_")}
    assert len(tests) == 2
    for name, test in tests.items():
        assert callable(test)
        if "tmp_path" in inspect.signature(test).parameters:
            directory = tmp_path / name
            directory.mkdir()
            test(directory)
        else:
            test()


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"min": "10"}, 'expects.response_length.min="10"', "must be an integer, not a string"),
        ({"mni": 10}, "expects.response_length.mni=10", "unknown key"),
        ({"max": -1}, "expects.response_length.max=-1", "greater than or equal to 0"),
        ({"min": 0}, "expects.response_length.min=0", "greater than or equal to 1"),
        ({}, "expects.response_length", "give min, max or both"),
    ],
)
def test_the_walkthrough_admission_claims_hold(
    plugin: types.ModuleType, params: dict[str, object], field: str, message: str
) -> None:
    with pytest.raises(AdmissionError) as caught:
        admit(fixture({"response_length": params}), plugin)
    assert caught.value.field == field
    assert message in caught.value.message


def test_an_empty_run_fails_the_readme_family(plugin: types.ModuleType) -> None:
    assert vacuity(admit(fixture({"response_length": {"max": 280}}), plugin)) is None
