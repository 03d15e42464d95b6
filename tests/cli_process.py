"""Reading what a real ``zeroclaw`` subprocess (``conftest.zeroclaw``) left behind."""

from __future__ import annotations

import json
import subprocess
from typing import Any


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
