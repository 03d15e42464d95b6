"""Putting the test agents of ``tests/agents/`` under test: configuration and suites."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from zeroclaw_eval.testing import CliResult, run_cli

AGENTS = Path(__file__).parent / "agents"


def command(script: str, *args: str) -> str:
    """The ``[eval.agent]`` lines running ``tests/agents/SCRIPT`` with this interpreter."""
    argv = [sys.executable, str(AGENTS / script), *args]
    return f"command = {json.dumps(argv)}"


def factory(spec: str) -> str:
    """The ``[eval.agent]`` line of an in-process agent of ``tests/agents/``."""
    return f"factory = {json.dumps(spec)}"


def configure(directory: Path, agent: str, **settings: Any) -> Path:
    """A ``zeroclaw.toml`` in ``directory`` attaching ``agent``, beside copies of the agents.

    The copies make ``factory = "module:callable"`` resolve from the file's directory.
    """
    directory.mkdir(parents=True, exist_ok=True)
    for script in AGENTS.glob("*.py"):
        shutil.copy(script, directory / script.name)
    lines = ["[eval]", *(f"{key} = {json.dumps(value)}" for key, value in settings.items())]
    config = directory / "zeroclaw.toml"
    config.write_text("\n".join([*lines, "[eval.agent]", agent, ""]), encoding="utf-8")
    return config


def write_suite(directory: Path, *cases: dict[str, Any]) -> Path:
    """A suite directory holding ``cases`` as ``case0.json``, ``case1.json``..."""
    directory.mkdir(parents=True, exist_ok=True)
    for index, case in enumerate(cases):
        text = json.dumps(case, ensure_ascii=False)
        (directory / f"case{index}.json").write_text(text, encoding="utf-8")
    return directory


def run(config: Path, suite: Path, *args: str) -> CliResult:
    """``zeroclaw eval run`` in this process, with ``config`` and ``suite``."""
    return run_cli(["eval", "run", "--config", str(config), "--suite", str(suite), *args])


def case_errors(result: CliResult) -> dict[str, str | None]:
    """Each case's run error, from a ``--format json`` report."""
    document = json.loads(result.stdout)
    return {case["name"]: case["error"] for case in document["cases"]}


def echoing_plugin(workspace: Path, handed: list[Any] | None = None) -> object:
    """A plugin registering ``echoing``: the echo agent of ``tests/agents/``, put under
    test as a plugin's bridged agent. Each ``ModelSide`` it is handed goes into
    ``handed``."""
    from zeroclaw_eval import BridgedAgent, BridgedSession, ModelSide, hookimpl

    from .agents.echo_agent import EchoAgent

    class EchoSession(BridgedSession):
        def __init__(self, side: ModelSide) -> None:
            if handed is not None:
                handed.append(side)
            super().__init__(side)
            self.agent = EchoAgent(
                base_url=self.route.base_url, api_key=self.route.api_key, workspace=workspace
            )

        def exchange_turn(self, turn: int, user_input: str) -> str:
            return str(self.agent.run_turn(user_input))

    class Echoing(BridgedAgent):
        name = "echoing"

        def start(self, side: ModelSide) -> EchoSession:
            return EchoSession(side)

    class Plugin:
        @hookimpl
        def zeroclaw_eval_register_agents(self, register: Any) -> None:
            register(Echoing())

    return Plugin()
