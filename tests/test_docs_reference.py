"""The site's generated reference pages (docs/reference/: configuration, families,
fixture schema, command-line help) are what ``tools/docs_reference.py`` writes from
the code now: a new configuration key, family or option without regenerated pages
is red."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from .conftest import PROJECT

SCRIPT = PROJECT / "tools" / "docs_reference.py"


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_committed_pages_are_what_the_code_generates(generator: ModuleType) -> None:
    pages = generator.pages()
    assert {path.name for path in pages} == {
        "configuration.md",
        "families.md",
        "schema.md",
        "cli.md",
    }
    for path, text in pages.items():
        committed = path.read_text(encoding="utf-8")
        assert committed == text, (
            f"{path.relative_to(PROJECT)} is stale: run python tools/docs_reference.py"
        )


def test_the_pages_list_every_key_family_and_command(generator: ModuleType) -> None:
    from zeroclaw_eval.cli import main
    from zeroclaw_eval.config import AgentTable, EvalConfig, LiveConfig

    pages = {path.name: text for path, text in generator.pages().items()}
    for table, model in (("eval", EvalConfig), ("eval.live", LiveConfig)):
        for key in set(model.model_fields) - {"live"}:
            assert f"| `[{table}] {key}` |" in pages["configuration.md"]
    for key in AgentTable.model_fields:
        assert f"| `[eval.agent] {key}` |" in pages["configuration.md"]
    registry = generator.builtin_registry()
    assert registry.families
    for name in registry.families:
        assert f"\n## `{name}`\n" in pages["families.md"]
    for name in main.commands["eval"].commands:  # type: ignore[attr-defined]
        assert f"\n## `zeroclaw eval {name}`\n" in pages["cli.md"]


def test_check_names_a_stale_page_and_exits_1(
    generator: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--check`` is green on the committed pages, red on a page that differs, naming it."""
    fresh = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False
    )
    assert (fresh.returncode, fresh.stderr) == (0, "")
    # A copy of the pages, one edited by hand, so the project's own stay untouched.
    reference = tmp_path / "docs" / "reference"
    shutil.copytree(PROJECT / "docs" / "reference", reference)
    monkeypatch.setattr(generator, "PROJECT", tmp_path)
    monkeypatch.setattr(generator, "REFERENCE", reference)
    with (reference / "families.md").open("a", encoding="utf-8") as page:
        page.write("\nedited by hand\n")
    assert generator.main_(["--check"]) == 1
    assert capsys.readouterr().err == "docs/reference/families.md: is stale\n"
    assert generator.main_([]) == 0  # rewritten
    assert generator.main_(["--check"]) == 0
