"""The provider's usage passed on to a bridged agent in its own dialect, driven by the
official SDKs: the cached and reasoning parts as reported, and nothing invented
where the provider reported nothing."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest

from tests.test_bridge import Script
from zeroclaw_eval.bridge.server import ModelBridge
from zeroclaw_eval.protocol import ModelReply, Usage

USER = [{"role": "user", "content": "hi"}]
REPORTED = Usage(
    input_tokens=120,
    output_tokens=30,
    cached_input_tokens=100,
    reasoning_tokens=20,
    cache_write_input_tokens=8,
)


def reply(usage: Usage | None) -> ModelReply:
    return ModelReply("hello", (), input_tokens=120, output_tokens=30, usage=usage)


@pytest.fixture
def bridge() -> Iterator[ModelBridge]:
    with ModelBridge() as running:
        yield running


def test_chat_completions_carries_the_reported_details_and_none_it_was_not_given(
    bridge: ModelBridge,
) -> None:
    with bridge.open_route("chat", Script(reply(REPORTED), reply(None))) as route:
        client = openai.OpenAI(base_url=route.base_url, api_key=route.api_key)
        reported = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        unreported = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]

    assert reported.usage is not None and unreported.usage is not None
    assert reported.usage.prompt_tokens_details is not None
    assert reported.usage.prompt_tokens_details.cached_tokens == 100
    assert reported.usage.completion_tokens_details is not None
    assert reported.usage.completion_tokens_details.reasoning_tokens == 20
    assert unreported.usage.prompt_tokens_details is None
    assert unreported.usage.completion_tokens_details is None


def test_the_responses_api_carries_the_reported_details(bridge: ModelBridge) -> None:
    with bridge.open_route("responses", Script(reply(REPORTED))) as route:
        client = openai.OpenAI(base_url=route.base_url, api_key=route.api_key)
        response = client.responses.create(model="m", input="hi")

    assert response.usage is not None
    assert response.usage.input_tokens_details.cached_tokens == 100
    assert response.usage.output_tokens_details.reasoning_tokens == 20


def test_anthropic_counts_the_cache_apart_as_its_api_does(bridge: ModelBridge) -> None:
    with bridge.open_route("anthropic", Script(reply(REPORTED), reply(None))) as route:
        client = anthropic.Anthropic(base_url=route.root_url, api_key=route.api_key)
        reported = client.messages.create(model="c", max_tokens=64, messages=USER)  # type: ignore[arg-type]
        with client.messages.stream(model="c", max_tokens=64, messages=USER) as stream:  # type: ignore[arg-type]
            unreported = stream.get_final_message()

    # 120 in all: 100 read from the cache, 8 written to it, 12 plain.
    assert reported.usage.input_tokens == 12
    assert reported.usage.cache_read_input_tokens == 100
    assert reported.usage.cache_creation_input_tokens == 8
    assert unreported.usage.input_tokens == 120
    assert unreported.usage.cache_read_input_tokens is None
