"""The site's command reference (docs/reference/commands.md) lists every option
each command really has, and no option it does not: it is checked against the click
commands themselves."""

from __future__ import annotations

import re

import click
import pytest

from zeroclaw_eval.cli import main

from .conftest import PROJECT

REFERENCE = (PROJECT / "docs" / "reference" / "commands.md").read_text(encoding="utf-8")
PREAMBLE, *ENTRIES = re.split(r"\n## `zeroclaw eval ", REFERENCE)
SECTIONS = {entry.split(None, 1)[0].rstrip("`"): entry for entry in ENTRIES}
eval_group = main.commands["eval"]
assert isinstance(eval_group, click.Group)
COMMANDS = eval_group.commands
SHARED = {"--config", "-p", "-h", "--help"}
"""Options the reference's preamble describes once for every command that has them."""


def options(command: click.Command) -> set[str]:
    return {
        opt
        for param in command.params
        if isinstance(param, click.Option)
        for opt in (*param.opts, *param.secondary_opts)
    }


def test_every_command_has_one_entry() -> None:
    assert sorted(SECTIONS) == sorted(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_of_the_command_is_in_its_entry(name: str) -> None:
    section = SECTIONS[name]
    for opt in sorted(options(COMMANDS[name]) - SHARED):
        assert re.search(rf"`{re.escape(opt)}(?![\w-])", section), f"{name}: {opt} is missing"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_in_the_entrys_table_exists(name: str) -> None:
    first_cells = re.findall(r"^\| (.*?) \|", SECTIONS[name], re.MULTILINE)
    written = {
        word.split()[0]
        for cell in first_cells
        for word in re.findall(r"`([^`]+)`", cell)
        if word.startswith("-")
    }
    assert written <= options(COMMANDS[name]), f"{name}: {written - options(COMMANDS[name])}"


def test_the_preamble_says_which_commands_take_the_shared_options() -> None:
    with_p = {name for name, command in COMMANDS.items() if "-p" in options(command)}
    with_config = {name for name, command in COMMANDS.items() if "--config" in options(command)}
    assert set(COMMANDS) - with_p == {"history", "compare"}
    assert set(COMMANDS) - with_config == {"plugins", "schema"}
    said = " ".join(PREAMBLE.split())
    assert "Every command but `history` and `compare` takes `-p no:NAME`" in said
    assert "every command but `plugins` and `schema` takes `--config PATH`" in said
