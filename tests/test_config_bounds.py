"""Settings that parse but cannot mean anything are refused when the file is read.

A port outside 1-65535 would be taken modulo 65536 by the socket layer (99999
reaches port 34463, while every error names 99999); an infinite timeout or back-off
overflows the clock; an infinite temperature or a NaN in ``extra_body`` would be
written into the request as ``Infinity``/``NaN``, which is not JSON. Each is one
line naming the file and the key, from the real ``zeroclaw`` process, before
anything runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zeroclaw_eval.config import LiveConfig

from .conftest import zeroclaw


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            'base_url = "http://127.0.0.1:99999/v1"',
            'eval.live.base_url="http://127.0.0.1:99999/v1": port 99999 is not a number '
            "from 1 to 65535",
        ),
        (
            'base_url = "http://127.0.0.1:65536/v1"',
            'eval.live.base_url="http://127.0.0.1:65536/v1": port 65536 is not a number '
            "from 1 to 65535",
        ),
        (
            'base_url = "http://127.0.0.1:0/v1"',
            'eval.live.base_url="http://127.0.0.1:0/v1": port 0 is not a number from 1 to 65535',
        ),
        (
            'base_url = "http://127.0.0.1:http/v1"',
            'eval.live.base_url="http://127.0.0.1:http/v1": port http is not a number '
            "from 1 to 65535",
        ),
        ('base_url = "http://:8080/v1"', 'eval.live.base_url="http://:8080/v1": names no host'),
        ("timeout_s = inf", "eval.live.timeout_s=Infinity: input should be a finite number"),
        (
            "retry_backoff_s = inf",
            "eval.live.retry_backoff_s=Infinity: input should be a finite number",
        ),
        ("temperature = inf", "eval.live.temperature=Infinity: input should be a finite number"),
        (
            "extra_body = { options = [1, { top_k = nan }] }",
            "eval.live.extra_body: options[1].top_k=nan: not a finite number "
            "(a JSON request cannot carry it)",
        ),
    ],
    ids=[
        "port-99999",
        "port-65536",
        "port-0",
        "port-not-a-number",
        "no-host",
        "infinite-timeout",
        "infinite-backoff",
        "infinite-temperature",
        "nan-in-extra-body",
    ],
)
def test_an_impossible_live_setting_is_refused_at_load(
    tmp_path: Path, line: str, message: str
) -> None:
    config = tmp_path / "zeroclaw.toml"
    config.write_text(f"[eval.live]\n{line}\n", encoding="utf-8")

    result = zeroclaw("eval", "run", cwd=tmp_path)

    assert result.returncode == 1
    assert result.stderr == f"Error: {config}: {message}\n"
    assert result.stdout == ""


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:1/v1",
        "http://127.0.0.1:65535/v1",
        "http://[::1]:8080/v1",
        "https://api.example.com/v1",
        "http://localhost/v1",
    ],
)
def test_the_ports_at_the_ends_of_the_range_and_no_port_at_all_are_accepted(url: str) -> None:
    assert LiveConfig.model_validate({"base_url": url}).base_url == url


def test_finite_numbers_in_extra_body_are_kept_as_given() -> None:
    body = {"top_k": 40, "options": [1.5, {"repeat_penalty": 1.1}]}

    assert LiveConfig.model_validate({"extra_body": body}).extra_body == body


@pytest.mark.parametrize(
    "line", ['env = {TOKEN = "x"}', "grace_s = 3", "first_reply_timeout_s = 5"]
)
def test_a_process_setting_on_a_factory_agent_is_refused_not_ignored(
    tmp_path: Path, line: str
) -> None:
    config = tmp_path / "zeroclaw.toml"
    config.write_text(f'[eval.agent]\nfactory = "my_agent:make"\n{line}\n', encoding="utf-8")

    result = zeroclaw("eval", "run", cwd=tmp_path)

    key = line.split(" ", 1)[0]
    assert result.returncode == 1
    assert result.stderr == f"Error: {config}: eval.agent: {key} is only for a command agent\n"
    assert result.stdout == ""
