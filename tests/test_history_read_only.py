"""A history on a read-only file system (a mounted artifact, a CI cache) is read by
``eval history`` and ``eval compare``, and refused for writing with the true reason:
the real console script, in a mount namespace where the history's directory is
bind-mounted read-only (``unshare``: as root, or in a user namespace of its own).

Before: every command said ``not a readable SQLite database (unable to open database
file)``, reading or writing."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ZEROCLAW
from tests.test_history_commands import add_run

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux mount namespaces")


def read_only(directory: Path, *commands: list[str]) -> list[subprocess.CompletedProcess[str]]:
    """Run each ``zeroclaw`` command (in ``directory``) with ``directory`` mounted
    read-only; each command's exit code, stdout and stderr, as if run alone."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) on this machine")
    isolate = ["--mount"] if os.geteuid() == 0 else ["--user", "--map-root-user", "--mount"]
    place = shlex.quote(str(directory))
    mount = f"mount --bind {place} {place} && mount -o remount,bind,ro {place} || exit 97"
    script = [f"{mount}; cd {place}"]  # in the mount: a directory entered before is not
    for number, command in enumerate(commands):
        line = shlex.join([str(ZEROCLAW), *command])
        out, err = (shlex.quote(str(directory.parent / f"{name}{number}")) for name in "oe")
        script.append(f"{line} >{out} 2>{err}; echo $? >{out}.rc")
    shell = subprocess.run(
        [unshare, *isolate, "sh", "-c", "; ".join(script)],
        capture_output=True,
        text=True,
        check=False,
    )
    if shell.returncode == 97 or "unshare:" in shell.stderr:
        pytest.skip(f"no read-only bind mount here: {shell.stderr.strip()}")
    results = []
    for number, command in enumerate(commands):
        out, err = (directory.parent / f"{name}{number}" for name in "oe")
        code = int(Path(f"{out}.rc").read_text(encoding="utf-8"))
        results.append(
            subprocess.CompletedProcess(
                command, code, out.read_text(encoding="utf-8"), err.read_text(encoding="utf-8")
            )
        )
    return results


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """Two runs of one suite in a history in a directory of its own; the suite beside it."""
    directory = tmp_path / "mounted"
    directory.mkdir()
    path = directory / "history.db"
    add_run(path, {"a": [True], "b": [True]})
    add_run(path, {"a": [True], "b": [False]})
    suite = directory / "evals" / "capability"
    suite.mkdir(parents=True)
    case = {
        "model_name": "a",
        "turns": [{"user_input": "hi", "steps": [{"response": {"type": "text", "content": "ok"}}]}],
        "expects": {"response_contains": ["ok"]},
    }
    (suite / "a.json").write_text(json.dumps(case), encoding="utf-8")
    return path


def test_a_read_only_history_is_read_and_refused_for_writing_with_the_true_reason(
    history: Path,
) -> None:
    before = history.read_bytes()
    listed, compared, ran = read_only(
        history.parent,
        ["eval", "history", "--history", "history.db", "--format", "json"],
        ["eval", "compare", "--history", "history.db", "--format", "json"],
        ["eval", "run", "evals/capability", "--history", "history.db"],
    )
    assert listed.returncode == 0, listed.stderr
    assert [run["id"] for run in json.loads(listed.stdout)["runs"]] == [2, 1]
    assert compared.returncode == 0, compared.stderr
    document = json.loads(compared.stdout)
    assert (document["base"]["id"], document["head"]["id"]) == (1, 2)
    assert ran.returncode == 1
    assert ran.stderr == (
        "Error: history.db: cannot write the history: Read-only file system (read it with "
        "zeroclaw eval history or compare; write the run elsewhere with --history, or not "
        "at all with --no-history)\n"
    )
    assert history.read_bytes() == before  # nothing written, nothing lost
