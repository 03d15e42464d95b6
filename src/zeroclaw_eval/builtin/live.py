"""The ``live`` run mode: the model's side is a real OpenAI-compatible endpoint.

Configured by the ``[eval.live]`` table. Live cases may leave out ``steps`` (the
model writes the responses; steps that are there are ignored), the agent is
offered the tools replay would offer (:mod:`zeroclaw_eval.case.offer`), and cases run up to
``max_concurrency`` at once. The HTTP client lives in
:mod:`zeroclaw_eval.builtin.live_client` and is imported only when a live case is
about to run, so registering this mode costs a replay run nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from zeroclaw_eval.case.fixture import LlmTrace
from zeroclaw_eval.case.offer import check_allowed, select
from zeroclaw_eval.errors import ConfigError
from zeroclaw_eval.grading.family import Problem
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.modes.base import CaseProvider, RunMode
from zeroclaw_eval.protocol import Tool

#: Request fields the harness sends itself, which ``extra_body`` may not set
#: (``stream``: the client reads one JSON document, not a stream of events).
HARNESS_FIELDS = frozenset(
    {"model", "messages", "tools", "stream", "temperature", "max_tokens", "seed", "stop"}
)

if TYPE_CHECKING:
    from zeroclaw_eval.config import EvalConfig


class LiveMode(RunMode):
    """Runs each case's turns against the model configured in ``[eval.live]``."""

    name = "live"
    description = "ask an OpenAI-compatible chat-completions endpoint ([eval.live])"
    talks_to_provider = True

    def admit(self, trace: LlmTrace) -> Iterable[Problem]:
        return ()  # steps are optional: the model writes the responses

    def check_config(self, config: EvalConfig, tools: Collection[str]) -> None:
        live = config.live
        if live.base_url is None or live.model is None:
            key = "base_url" if live.base_url is None else "model"
            raise ConfigError(f"eval.live.{key}: not set; the live mode needs it")
        if urlsplit(live.base_url).scheme not in ("http", "https"):
            raise ConfigError(
                f"eval.live.base_url={live.base_url!r}: must be an http:// or https:// URL"
            )
        check_allowed(config, tools)
        for key in live.extra_body:
            if key in HARNESS_FIELDS:
                raise ConfigError(
                    f"eval.live.extra_body.{key}: the harness sets this request field itself"
                    + (
                        ""
                        if key in ("model", "messages", "tools", "stream")
                        else f" (use eval.live.{key})"
                    )
                )
        if live.api_key_env is not None and not os.environ.get(live.api_key_env):
            # The variable's name, never a value: the key must not reach any output.
            raise ConfigError(
                f"eval.live.api_key_env: the environment variable {live.api_key_env} "
                "is not set (it must hold the API key)"
            )

    def tools(self, available: Mapping[str, Tool], config: EvalConfig) -> Mapping[str, Tool]:
        return select(available, config)

    def generation_settings(self, config: EvalConfig) -> Mapping[str, Any]:
        return config.live.generation()

    def concurrency(self, config: EvalConfig) -> int:
        return config.live.max_concurrency

    def provider(self, trace: LlmTrace, config: EvalConfig) -> CaseProvider:
        from zeroclaw_eval.builtin.live_client import LiveProvider

        return LiveProvider(config.live, case_timeout_s=config.case_timeout_s)


@hookimpl
def zeroclaw_eval_register_modes(register: Callable[[RunMode], None]) -> None:
    register(LiveMode())
