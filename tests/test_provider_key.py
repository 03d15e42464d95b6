"""The provider's key (``[eval.live] api_key_env``) never reaches an agent, and never
reaches anything the harness writes: a real loopback server echoes it in successful
replies (content, model, tool-call arguments), agents dump their environment and
quote it, and every sink is read back byte by byte: stdout, stderr, the text, JSON,
GitHub and OpenTelemetry reports, ``GITHUB_STEP_SUMMARY``, the history database, the trend page
and the fixtures ``eval record`` writes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from zeroclaw_eval.util.redact import REDACTED, Secrets

from .chat_server import ChatServer, Reply, Request, shaped, text, tool_calls
from .live_helpers import KEY_ENV, SECRET, live_case, write_config, zeroclaw


def fragments(key: str, size: int = 8) -> set[str]:
    """Every piece of ``key`` of ``size`` characters: none may be written anywhere."""
    return {key[start : start + size] for start in range(len(key) - size + 1)}


def leaks(data: bytes | str, key: str = SECRET, size: int = 8) -> list[str]:
    """The pieces of ``key`` of ``size`` characters found in ``data``."""
    found = data if isinstance(data, str) else data.decode("utf-8", "replace")
    return sorted(piece for piece in fragments(key, size) if piece in found)


def written_files(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` but the test's own inputs, by name."""
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.suffix != ".py"
    }


def echo_the_key(request: Request) -> Reply:
    """A server that echoes the key it was sent, in every field of a successful reply:
    a tool call's arguments first, then the text and the reported model."""
    key = request.headers["Authorization"].removeprefix("Bearer ")
    if not any(message["role"] == "tool" for message in request.body["messages"]):
        return tool_calls(("call_1", "echo", {"message": f"the key is {key}"}))
    return shaped(text(f"the key is {key}, said the model"), model=f"model-{key}")


def test_a_key_a_server_echoes_in_successful_replies_is_written_nowhere(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    case = live_case(
        ["Echo the key"],
        {
            "response_contains": ["absent"],
            "tool_arguments_contain": [{"tool": "echo", "needle": "absent"}],
            "tool_results_contain": [{"tool": "echo", "needle": "absent"}],
        },
        name="echoed-key",
    )
    (suite / "echoed.json").write_text(json.dumps(case), encoding="utf-8")
    summary = tmp_path / "summary.md"
    env = {
        "GITHUB_STEP_SUMMARY": str(summary),
        "ZEROCLAW_EVAL_NO_HISTORY": "0",
        # The otel report with every model request's content: what the model said too.
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
    }
    with ChatServer(echo_the_key) as server:
        write_config(
            tmp_path,
            server.url,
            eval_suite_dir="suite",
            eval_mode="live",
            eval_report_requests="all",
        )
        run = zeroclaw(
            "eval", "run", "--format", "json", "--history", "h.sqlite",
            "--report", "text:out/report.txt", "--report", "github:out/report.github",
            "--report", "json:out/report.json", "--report", "otel:out/report.otlp.jsonl",
            cwd=tmp_path, env_extra=env,
        )  # fmt: skip
        record = zeroclaw(
            "eval", "record", "--suite", "suite", "--out", "recorded", cwd=tmp_path
        )  # fmt: skip
        sent = [request.headers["Authorization"] for request in server.requests]
    trend = zeroclaw(
        "eval", "history", "--history", "h.sqlite", "--html", "out/trend.html", cwd=tmp_path
    )  # fmt: skip

    assert f"Bearer {SECRET}" in sent  # the key really was used, and really echoed
    assert run.returncode == 1, run.stderr  # the checks fail: their details quote it all
    assert record.returncode == 1 and trend.returncode == 0, record.stderr + trend.stderr
    document = json.loads(run.stdout)
    shown = json.dumps(document)
    assert REDACTED in shown and "model-[redacted]" in document["cases"][0]["models"]
    assert (tmp_path / "recorded" / "echoed.json").is_file()
    files = written_files(tmp_path)
    assert {"h.sqlite", "out/report.txt", "out/report.github", "out/report.json"} <= set(files)
    # The exported spans held the echoed key, redacted: the model, the reply, the arguments.
    spans = files["out/report.otlp.jsonl"].decode("utf-8")
    assert '"model-[redacted]"' in spans and "the key is [redacted]" in spans
    assert {"out/trend.html", "recorded/echoed.json", "summary.md"} <= set(files)
    for where, data in {**files, "stdout": run.stdout, "stderr": run.stderr}.items():
        assert leaks(data) == [], where
    for where, data in {"record": record.stdout + record.stderr, "trend": trend.stderr}.items():
        assert leaks(data) == [], where
    recorded = (tmp_path / "recorded" / "echoed.json").read_text(encoding="utf-8")
    assert "the key is [redacted], said the model" in recorded


DUMPER = """\
import json, os, sys
with open(sys.argv[1], "w") as out:
    json.dump(dict(os.environ), out)
for name, value in sorted(os.environ.items()):
    print(f"{name}={value}", file=sys.stderr)
sys.exit(3)
"""


def agent_table(tmp_path: Path, script: str, *args: str, env: str = "") -> str:
    path = tmp_path / "agent_script.py"
    path.write_text(script, encoding="utf-8")
    argv = json.dumps([sys.executable, str(path), *args])
    return f"\n[eval.agent]\ncommand = {argv}\n{env}"


def test_a_command_agent_never_inherits_the_key_and_its_dumped_environment_is_clean(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a.json").write_text(
        json.dumps(live_case(["hi"], {"response_contains": ["hi"]}, name="dumps-env")),
        encoding="utf-8",
    )
    seen = tmp_path / "environment.json"
    with ChatServer(echo_the_key) as server:
        config = write_config(tmp_path, server.url, eval_suite_dir="suite", eval_mode="live")
        with config.open("a", encoding="utf-8") as handle:
            handle.write(agent_table(tmp_path, DUMPER, str(seen)))
        run = zeroclaw("eval", "run", "--format", "json", cwd=tmp_path)

    assert run.returncode == 1
    environment = json.loads(seen.read_text(encoding="utf-8"))
    assert KEY_ENV not in environment and leaks(json.dumps(environment)) == []
    assert environment["OPENAI_API_KEY"] != SECRET  # the route's own key, as before
    error = json.loads(run.stdout)["cases"][0]["error"]
    assert "exited with status 3" in error and "ZEROCLAW_EVAL_WORKSPACE=" in error  # stderr
    assert leaks(run.stdout + run.stderr) == []


#: An agent handed the key anyway (the team wrote it into ``env``): it quotes it on
#: stderr, whole, then where the harness's 600-character tail cuts it (the last
#: ``{keep}`` characters of the key kept), and in its error message.
QUOTER = """\
import json, os, sys
key = os.environ["HANDED_KEY"]
print("the key:", key, file=sys.stderr)
print("x" * 100 + key + "y" * (600 - {keep}), file=sys.stderr, end="")
print(json.dumps({"type": "error", "turn": 0, "message": "failed with " + key}), flush=True)
"""


@pytest.mark.parametrize("keep", [3, 10, 20])
def test_a_key_an_agent_quotes_on_stderr_or_in_its_error_is_redacted_even_where_cut(
    tmp_path: Path, keep: int
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a.json").write_text(
        json.dumps(live_case(["hi"], {"response_contains": ["hi"]}, name="quotes-key")),
        encoding="utf-8",
    )
    handed = f"env = {{ HANDED_KEY = {json.dumps(SECRET)} }}\n"
    with ChatServer(echo_the_key) as server:
        config = write_config(tmp_path, server.url, eval_suite_dir="suite", eval_mode="live")
        with config.open("a", encoding="utf-8") as handle:
            handle.write(agent_table(tmp_path, QUOTER.replace("{keep}", str(keep)), env=handed))
        run = zeroclaw("eval", "run", "--format", "json", cwd=tmp_path)

    error = json.loads(run.stdout)["cases"][0]["error"]
    assert "the agent reported an error: failed with [redacted]" in error
    assert "its stderr ends: ..." in error and error.endswith("y" * 500)
    assert leaks(run.stdout + run.stderr, size=6) == []


FACTORY = """\
import os

class Leaky:
    def run_turn(self, user_input):
        raise RuntimeError("cannot go on with " + os.environ["{env}"])

def make_agent(*, base_url, api_key, workspace):
    return Leaky()
"""


def test_an_in_process_agent_raising_with_the_key_is_quoted_without_it(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a.json").write_text(
        json.dumps(live_case(["hi"], {"response_contains": ["hi"]}, name="raises-key")),
        encoding="utf-8",
    )
    (tmp_path / "leaky_agent.py").write_text(FACTORY.replace("{env}", KEY_ENV), encoding="utf-8")
    with ChatServer(echo_the_key) as server:
        config = write_config(tmp_path, server.url, eval_suite_dir="suite", eval_mode="live")
        with config.open("a", encoding="utf-8") as handle:
            handle.write('\n[eval.agent]\nfactory = "leaky_agent:make_agent"\n')
        run = zeroclaw("eval", "run", "--format", "json", cwd=tmp_path)

    error = json.loads(run.stdout)["cases"][0]["error"]
    assert error.endswith("the agent raised RuntimeError: cannot go on with [redacted]")
    assert leaks(run.stdout + run.stderr) == []


UPSTREAM_DUMPER = """\
import json, os, sys
with open(sys.argv[1], "w") as out:
    json.dump(dict(os.environ), out)
sys.exit(4)
"""


def test_a_teams_mcp_server_started_for_a_live_case_never_inherits_the_key(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a.json").write_text(
        json.dumps(live_case(["hi"], {"response_contains": ["hi"]}, name="upstream-env")),
        encoding="utf-8",
    )
    seen = tmp_path / "upstream-environment.json"
    server_script = tmp_path / "upstream_server.py"
    server_script.write_text(UPSTREAM_DUMPER, encoding="utf-8")
    upstream = json.dumps([sys.executable, str(server_script), str(seen)])
    with ChatServer(echo_the_key) as server:
        config = write_config(tmp_path, server.url, eval_suite_dir="suite", eval_mode="live")
        with config.open("a", encoding="utf-8") as handle:
            handle.write(
                agent_table(tmp_path, DUMPER, str(tmp_path / "agent-env.json"))
                + f'tools = "served"\nmcp_upstream = {upstream}\n'
            )
        run = zeroclaw("eval", "run", "--format", "json", cwd=tmp_path)

    assert run.returncode == 1
    assert "exited with status 4" in json.loads(run.stdout)["cases"][0]["error"]
    environment = json.loads(seen.read_text(encoding="utf-8"))
    assert KEY_ENV not in environment and "PATH" in environment


# --- the redaction itself -------------------------------------------------------------


def test_secrets_redact_whole_values_and_the_part_left_beside_a_cut() -> None:
    secrets = Secrets.of(["sk-0123456789abcdef"])
    assert secrets.text("a sk-0123456789abcdef b") == "a [redacted] b"
    assert secrets.text('"quoted sk-0123456..."') == '"quoted [redacted]..."'
    assert secrets.text("...89abcdef | the rest") == "...[redacted] | the rest"
    # Far from a cut, a short piece is ordinary text.
    assert secrets.text("sk-0123 and 89abcdef") == "sk-0123 and 89abcdef"


def test_secrets_walk_every_string_of_a_value_and_keep_what_holds_none() -> None:
    from zeroclaw_eval.report.model import CaseReport, CheckResult

    secrets = Secrets.of(["sk-0123456789abcdef"])
    clean = CaseReport("case", "c.json", (CheckResult("check", True, "fine"),))
    assert secrets.value(clean) is clean
    dirty = CaseReport(
        "case",
        "c.json",
        (CheckResult("check", False, "saw sk-0123456789abcdef"),),
        requests=({"sk-0123456789abcdef": ["x sk-0123456789abcdef"]},),
    )
    redacted = secrets.value(dirty)
    assert redacted.checks[0].detail == "saw [redacted]"
    assert redacted.requests == ({"[redacted]": ["x [redacted]"]},)


def test_a_placeholder_key_is_not_redacted_but_its_variable_is_still_withheld() -> None:
    secrets = Secrets.from_environment(["KEY"], {"KEY": "none", "PATH": "/bin"})
    assert not secrets and secrets.text("none of it") == "none of it"
    assert secrets.environment({"KEY": "none", "PATH": "/bin"}) == {"PATH": "/bin"}
