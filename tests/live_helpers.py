"""Helpers for the live-mode tests: a config pointing at a loopback server, and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ZEROCLAW = str(Path(sys.executable).with_name("zeroclaw"))
KEY_ENV = "ZEROCLAW_TEST_API_KEY"
SECRET = "sk-test-do-not-print-4f1c9a"


def write_config(directory: Path, base_url: str, **live: Any) -> Path:
    """A ``zeroclaw.toml`` in ``directory`` whose ``[eval.live]`` points at ``base_url``.

    Retries wait 10 ms so the tests stay fast; ``live`` overrides any key
    (``eval_*`` keys go to ``[eval]``: ``eval_gating=False``).
    """
    settings: dict[str, Any] = {
        "base_url": base_url,
        "model": "example-model",
        "api_key_env": KEY_ENV,
        "timeout_s": 5.0,
        "max_retries": 2,
        "retry_backoff_s": 0.01,
        "max_concurrency": 1,
    }
    top = {key.removeprefix("eval_"): value for key, value in live.items() if key[:5] == "eval_"}
    settings.update({key: value for key, value in live.items() if key[:5] != "eval_"})
    lines = ["[eval]", *(f"{k} = {_toml(v)}" for k, v in top.items()), "", "[eval.live]"]
    lines += [f"{key} = {_toml(value)}" for key, value in settings.items() if value is not None]
    path = directory / "zeroclaw.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)  # strings, numbers and lists of strings read the same in TOML


def zeroclaw(
    *args: str,
    cwd: Path,
    key: str | None = SECRET,
    stderr: int | None = None,
    env_extra: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``zeroclaw`` console script in ``cwd`` with the API key in its env
    (and ``env_extra``)."""
    env = {k: v for k, v in os.environ.items() if k != KEY_ENV}
    if key is not None:
        env[KEY_ENV] = key
    env.update(env_extra or {})
    return subprocess.run(
        [ZEROCLAW, *args],
        cwd=cwd,
        env=env,
        capture_output=stderr is None,
        stdout=subprocess.PIPE if stderr is not None else None,
        stderr=stderr,
        text=True,
        timeout=60,
        check=False,
    )


def live_case(user_inputs: list[str], expects: dict[str, Any], name: str = "live-case") -> Any:
    """A live case: turns without steps (the model writes the responses)."""
    return {
        "model_name": name,
        "turns": [{"user_input": text} for text in user_inputs],
        "expects": expects,
    }
