"""A plugin's own settings: ``[eval.plugins.NAME]``, validated against the model the
plugin declares, refused naming the file and the key, and handed to that plugin only.

The installed ``junit`` plugin (``plugins/zeroclaw-eval-junit``) declares one setting,
``suite_name``; in-process plugins try what an installed one cannot show cheaply.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from zeroclaw_eval import hookimpl
from zeroclaw_eval.testing import fixture, run_cli, run_zeroclaw, write_fixture

from .test_plugin_control import installed  # noqa: F401 - the fixture, by name


def project(tmp_path: Path, plugins_table: str) -> Path:
    write_fixture(tmp_path / "suite", fixture({"response_contains": ["hi"]}, response="hi"))
    config = tmp_path / "zeroclaw.toml"
    config.write_text(f'[eval]\nsuite_dir = "suite"\n{plugins_table}', encoding="utf-8")
    return config


@pytest.mark.usefixtures("installed")
def test_the_junit_plugin_writes_the_suite_name_its_table_sets(tmp_path: Path) -> None:
    config = project(tmp_path, '[eval.plugins.junit]\nsuite_name = "nightly evals"\n')
    result = run_zeroclaw(["eval", "run", "--config", config, "--format", "junit"])
    assert result.exit_code == 0, result.stderr
    (suite,) = ET.fromstring(result.stdout).iter("testsuite")
    assert suite.get("name") == "nightly evals"
    # Without the table, the suite's own name, as before.
    plain = run_zeroclaw(
        ["eval", "run", "--config", project(tmp_path / "plain", ""), "--format", "junit"]
    )
    (suite,) = ET.fromstring(plain.stdout).iter("testsuite")
    assert suite.get("name") == str(tmp_path / "plain" / "suite")


@pytest.mark.parametrize(
    ("table", "says"),
    [
        (
            '[eval.plugins.junit]\nsuite_nam = "x"\n',
            'eval.plugins.junit.suite_nam="x": unknown key '
            "(did you mean 'suite_name'?) (known keys: suite_name)",
        ),
        ("[eval.plugins.junit]\nsuite_name = 3\n", "eval.plugins.junit.suite_name=3: "),
        (
            '[eval.plugins.junti]\nsuite_name = "x"\n',
            "eval.plugins.junti: no loaded plugin named 'junti' has settings (did you mean "
            "'junit'?) (plugins with settings: junit)",
        ),
    ],
    ids=["unknown-key", "wrong-type", "unknown-plugin"],
)
@pytest.mark.usefixtures("installed")
def test_a_bad_plugin_table_is_one_error_naming_the_file_and_the_key(
    tmp_path: Path, table: str, says: str
) -> None:
    config = project(tmp_path, table)
    result = run_zeroclaw(["eval", "run", "--config", config])
    assert result.exit_code == 1, result.stdout
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"Error: {config}: {says}"), line
    assert result.stdout == ""


@pytest.mark.usefixtures("installed")
def test_the_table_of_a_blocked_plugin_is_left_alone(tmp_path: Path) -> None:
    config = project(tmp_path, '[eval.plugins.junit]\nsuite_name = "nightly"\n')
    result = run_zeroclaw(["eval", "run", "--config", config, "-p", "no:junit"])
    assert result.exit_code == 0, result.stderr


class Seen(BaseModel):
    model_config = ConfigDict(extra="forbid")

    greeting: str = "hello"


class SettingsPlugin:
    """Declares settings and keeps what it was handed; ``__name__`` is its plugin name."""

    def __init__(self, name: str = "mine") -> None:
        self.__name__ = name
        self.handed: list[BaseModel] = []

    @hookimpl
    def zeroclaw_eval_register_settings(
        self, register: Callable[[type[BaseModel], Callable[[BaseModel], None]], None]
    ) -> None:
        register(Seen, self.handed.append)


class Nosy:
    """Declares no settings: it must never see another plugin's table."""

    __name__ = "nosy"

    @hookimpl
    def zeroclaw_eval_register_settings(self, register: Callable[..., None]) -> None:
        pass


def test_each_plugin_is_handed_its_own_table_only_its_defaults_without_one(
    tmp_path: Path,
) -> None:
    mine = SettingsPlugin()
    config = project(tmp_path, '[eval.plugins.mine]\ngreeting = "bonjour"\n')
    result = run_cli(["eval", "run", "--config", config], mine, Nosy())
    assert result.exit_code == 0, result.stderr
    assert mine.handed == [Seen(greeting="bonjour")]

    defaults = SettingsPlugin()
    result = run_cli(["eval", "run", "--config", project(tmp_path / "d", "")], defaults)
    assert result.exit_code == 0, result.stderr
    assert defaults.handed == [Seen()]


@pytest.mark.parametrize(
    ("registered", "says"),
    [
        ((Seen,), "registered settings as"),
        ((dict, print), "registered settings as"),
        ((Seen, print, print), "registered settings as"),
    ],
    ids=["no-callable", "not-a-model", "three-arguments"],
)
def test_settings_registered_wrongly_stop_the_run_naming_the_plugin(
    tmp_path: Path, registered: tuple[Any, ...], says: str
) -> None:
    class Wrong:
        __name__ = "wrong"

        @hookimpl
        def zeroclaw_eval_register_settings(self, register: Callable[..., None]) -> None:
            register(*registered)

    result = run_cli(["eval", "run", "--config", project(tmp_path, "")], Wrong())
    assert result.exit_code == 1
    assert f"plugin 'wrong' {says}" in result.stderr


def test_a_plugin_failing_to_take_its_settings_stops_the_run_naming_it(tmp_path: Path) -> None:
    def refuse(settings: BaseModel) -> None:
        raise RuntimeError("greeting too polite")

    class Picky:
        __name__ = "picky"

        @hookimpl
        def zeroclaw_eval_register_settings(self, register: Callable[..., None]) -> None:
            register(Seen, refuse)

    result = run_cli(["eval", "run", "--config", project(tmp_path, "")], Picky())
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: plugin 'picky' failed taking its settings: RuntimeError: greeting too polite\n"
    )


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    level: int
    label: str = "x"


class Bare(BaseModel):
    model_config = ConfigDict(extra="forbid")


def declaring(name: str, model: type[BaseModel]) -> object:
    class Declares:
        @hookimpl
        def zeroclaw_eval_register_settings(self, register: Callable[..., None]) -> None:
            register(model, lambda settings: None)

    plugin = Declares()
    plugin.__name__ = name  # type: ignore[attr-defined]
    return plugin


@pytest.mark.parametrize(
    ("table", "plugins", "says"),
    [
        # the second table is refused though the first is a plugin's
        (
            "[eval.plugins.strict]\nlevel = 1\n[eval.plugins.other]\nx = 1\n",
            ("strict",),
            "eval.plugins.other: no loaded plugin named 'other' has settings "
            "(plugins with settings: strict)",
        ),
        (
            "[eval.plugins.other]\nx = 1\n",
            ("strict", "bare"),
            "eval.plugins.other: no loaded plugin named 'other' has settings "
            "(plugins with settings: bare, strict)",
        ),
        (
            "[eval.plugins.strict]\nlevel = 1\nlevl = 2\n",
            ("strict",),
            "eval.plugins.strict.levl=2: unknown key (did you mean 'level'?) "
            "(known keys: level, label)",
        ),
        (
            "[eval.plugins.other]\nx = 1\n",
            (),
            "eval.plugins.other: no loaded plugin named 'other' has settings "
            "(plugins with settings: none)",
        ),
        # a required key missing is named without a value
        (
            "[eval.plugins.strict]\n",
            ("strict",),
            "eval.plugins.strict.level: required key is missing",
        ),
        (
            "[eval.plugins.bare]\nx = 1\n",
            ("bare",),
            "eval.plugins.bare.x=1: unknown key (known keys: none)",
        ),
    ],
    ids=[
        "second-unknown",
        "two-declared",
        "misspelt",
        "none-declared",
        "required-missing",
        "no-keys",
    ],
)
def test_every_table_is_held_to_its_plugin(
    tmp_path: Path, table: str, plugins: tuple[str, ...], says: str
) -> None:
    models = {"strict": Strict, "bare": Bare}
    loaded = [declaring(name, models[name]) for name in plugins]
    config = project(tmp_path, table)
    result = run_cli(["eval", "run", "--config", config], *loaded)
    assert result.exit_code == 1, result.stdout
    assert result.stderr == f"Error: {config}: {says}\n"
