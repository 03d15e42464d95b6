"""The mutation-testing tool (``tools/mutate.py``) proposes the mutants that matter.

It is run by hand, not by CI (docs/MUTATION.md); these tests keep it honest where
a silent gap would inflate its score: the guards of the exit decision are each
dropped on their own, class bodies (pydantic fields, ``@property`` bodies) are
reached, and the configuration names modules and tests that exist.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from .conftest import PROJECT

PACKAGE = PROJECT / "src" / "zeroclaw_eval"


def load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutate_tool", PROJECT / "tools" / "mutate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mutate_tool", module)
    spec.loader.exec_module(module)
    return module


TOOL = load_tool()


def labels(module: str, only: tuple[str, ...] = ()) -> list[str]:
    source = (PACKAGE / module).read_bytes()
    return [mutant.id for mutant in TOOL.mutants_of(module, source, only)]


def test_each_guard_of_the_suite_verdict_is_dropped_on_its_own() -> None:
    source = (PACKAGE / "report/model.py").read_bytes()
    mutants = TOOL.mutants_of("report/model.py", source, ("SuiteReport.all_passed",))
    assert {m.scope for m in mutants} == {"SuiteReport.all_passed"}
    guards = [
        "not self.errors",
        "self.interrupted is None",
        "bool(self.cases)",
        "self.passed_count == len(self.cases)",
    ]
    for dropped in guards:
        kept = [guard for guard in guards if guard != dropped]
        assert any(
            dropped not in m.replacement and all(guard in m.replacement for guard in kept)
            for m in mutants
        ), dropped


def test_property_bodies_and_field_constraints_are_mutated() -> None:
    assert "case/fixture.py::ToolCallsResponse::Field(min_length=1) -> Field()" in labels(
        "case/fixture.py"
    )
    assert "case/fixture.py::TextResponse::NonNegativeInt -> int" in labels("case/fixture.py")
    passed = labels("report/model.py", ("CaseReport.passed",))
    assert "report/model.py::CaseReport.passed::all -> any" in passed


def test_mutant_ids_are_unique_and_every_mutant_changes_the_code() -> None:
    for module in ("builtin/tools.py", "report/model.py"):
        source = (PACKAGE / module).read_bytes()
        mutants = TOOL.mutants_of(module, source)
        assert len({m.id for m in mutants}) == len(mutants)
        assert all(m.apply(source) != source for m in mutants)


def test_the_configuration_names_modules_and_tests_that_exist() -> None:
    settings = TOOL.load_settings(PROJECT)
    assert settings.targets
    for target in settings.targets:
        assert (PACKAGE / target.module).is_file(), target.module
        assert target.tests, target.module
        for test in target.tests:
            assert (PROJECT / test).is_file(), test
    scored = {target.module for target in settings.targets}
    for key in settings.equivalents:
        assert key.split("::")[0] in scored, key
