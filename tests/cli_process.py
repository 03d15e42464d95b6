"""Running the real ``zeroclaw`` console script in a subprocess, as CI does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# The console script pip installed next to this interpreter.
ZEROCLAW = str(Path(sys.executable).with_name("zeroclaw"))


def zeroclaw(
    *args: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``zeroclaw ARGS``; ``env`` adds to the inherited environment."""
    return subprocess.run(
        [ZEROCLAW, *map(str, args)],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )


def json_report(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The JSON document on stdout; a run that printed anything else fails the test."""
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def assert_clean_errors(stderr: str) -> list[str]:
    """Every stderr line is a one-line ``Error: ...``, and none is a traceback."""
    lines = stderr.splitlines()
    assert "Traceback" not in stderr
    assert lines, "expected an error on stderr"
    assert all(line.startswith("Error: ") for line in lines), lines
    return lines
