"""An unknown key close to a known one says which was meant, in fixtures (admission)
and in the configuration; one far from every known key suggests nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .cli_process import assert_clean_errors
from .conftest import zeroclaw


def text_case(**changes: Any) -> dict[str, Any]:
    case: dict[str, Any] = {
        "model_name": "typo",
        "turns": [
            {
                "user_input": "Echo hi",
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [
                                {"id": "c1", "name": "echo", "arguments": {"message": "hi"}}
                            ],
                        }
                    },
                    {"response": {"type": "text", "content": "hi"}},
                ],
            }
        ],
        "expects": {"response_contains": ["hi"]},
    }
    case.update(changes)
    return case


def test_admission_suggests_the_key_a_typo_was_meant_to_be(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    cases = {
        "family": text_case(expects={"response_contians": ["hi"]}),
        "entry": text_case(expects={"tool_arguments_contain": [{"tool": "echo", "neede": "hi"}]}),
        "step": text_case(),
        "turn": text_case(),
        "far": text_case(expects={"zzz_nothing_like_it": ["hi"]}),
    }
    cases["step"]["turns"][0]["steps"][1]["response"]["refusl"] = "no"
    cases["turn"]["turns"][0]["step"] = cases["turn"]["turns"][0].pop("steps")
    for name, case in cases.items():
        (suite / f"{name}.json").write_text(json.dumps(case), encoding="utf-8")
    result = zeroclaw("eval", "check", "--suite", "suite", cwd=tmp_path)
    assert result.returncode == 1
    lines = assert_clean_errors(result.stderr)
    assert (
        "Error: suite/family.json: expects.response_contians: unknown key: no such expectation "
        "family (did you mean 'response_contains'?) (known: "
    ) in result.stderr
    assert (
        'Error: suite/entry.json: expects.tool_arguments_contain[0].neede="hi": unknown key '
        "(did you mean 'needle'?)" in lines
    )
    assert (
        'Error: suite/step.json: turns[0].steps[1].response.refusl="no": unknown key '
        "(did you mean 'refusal'?)" in lines
    )
    assert "Error: suite/turn.json: turns[0].step: unknown key (did you mean 'steps'?)" in lines
    (far,) = [line for line in lines if "far.json" in line]
    assert "did you mean" not in far


def test_the_configuration_suggests_the_key_a_typo_was_meant_to_be(tmp_path: Path) -> None:
    config = tmp_path / "zeroclaw.toml"
    for table, typo, meant in [
        ("[eval]", "reprot = []", "report"),
        ("[eval.agent]\ncommand = ['x']", "grace = 1", "grace_s"),
        ("[eval.live]", "max_retry = 1", "max_retries"),
    ]:
        config.write_text(f"{table}\n{typo}\n", encoding="utf-8")
        result = zeroclaw("eval", "check", cwd=tmp_path)
        assert result.returncode == 1
        assert f"unknown key (did you mean {meant!r}?) (known keys: " in result.stderr
    config.write_text("[eval]\nnothing_like_any = 1\n", encoding="utf-8")
    result = zeroclaw("eval", "check", cwd=tmp_path)
    assert "unknown key (known keys: " in result.stderr
