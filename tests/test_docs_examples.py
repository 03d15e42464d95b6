"""The examples of the README and the documentation site run as written: the
README's thirty-second fixture and commands print what it shows, the tutorial's
files and commands give the reports it shows (green, then red after its one
edit), and every whole fixture a page shows is admitted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from zeroclaw_eval.testing import admit

from .conftest import PROJECT, zeroclaw

README = (PROJECT / "README.md").read_text(encoding="utf-8")
DOCS = PROJECT / "docs"
TUTORIAL = (DOCS / "tutorial.md").read_text(encoding="utf-8")


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


def titled(text: str) -> dict[str, str]:
    """The page's blocks that name their file (```python title="agent.py"), by file."""
    found = re.findall(r'^```\w+ title="([^"]+)"\n(.*?)^```', text, re.DOTALL | re.MULTILINE)
    return dict(found)


def commands(block: str) -> list[list[str]]:
    """Each ``zeroclaw`` command of a shell block, its comment cut."""
    return [
        line.split("#", 1)[0].split()[1:]
        for line in block.splitlines()
        if line.startswith("zeroclaw ")
    ]


def test_the_readme_example_prints_what_it_shows(tmp_path: Path) -> None:
    (fixture,) = blocks(README, "json")
    suite = tmp_path / "my_suite"
    suite.mkdir()
    (suite / "echo.json").write_text(fixture, encoding="utf-8")
    check, run = commands(blocks(README, "sh")[2])
    (shown,) = blocks(README, "text")
    assert check[:2] == ["eval", "check"] and run[:2] == ["eval", "run"]
    checked = zeroclaw(*check, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    ran = zeroclaw(*run, cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout == shown


def tutorial_outputs() -> list[str]:
    return blocks(TUTORIAL, "text")


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    files = titled(TUTORIAL)
    assert set(files) == {"agent.py", "zeroclaw.toml", "evals/shout.json"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    shell = [c for block in blocks(TUTORIAL, "sh") for c in commands(block)]
    check, run, run_again = shell
    checked_out, ran_out, failed_out = tutorial_outputs()

    checked = zeroclaw(*check, cwd=tmp_path)
    assert (checked.returncode, checked.stdout) == (0, checked_out), checked.stderr
    ran = zeroclaw(*run, cwd=tmp_path)
    assert (ran.returncode, ran.stdout) == (0, ran_out), ran.stderr

    # Step 6: the one edit the page asks for, and the red report it shows.
    agent = tmp_path / "agent.py"
    broken = agent.read_text(encoding="utf-8").replace("text.upper()", "text.lower()")
    assert broken != files["agent.py"] and "`text.lower()`" in TUTORIAL
    agent.write_text(broken, encoding="utf-8")
    failed = zeroclaw(*run_again, cwd=tmp_path)
    assert (failed.returncode, failed.stdout) == (1, failed_out), failed.stderr


PAGES = sorted(DOCS.rglob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_every_whole_fixture_a_page_shows_is_admitted(page: Path) -> None:
    for block in blocks(page.read_text(encoding="utf-8"), "json"):
        if not block.lstrip().startswith("{"):
            continue
        document = json.loads(block)
        if "turns" not in document or "expects" not in document:
            continue
        admit(document, source=str(page.relative_to(PROJECT)))
