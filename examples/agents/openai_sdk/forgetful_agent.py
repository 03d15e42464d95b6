"""The notes agent with a deliberate bug: it never sends a tool's result back.

It runs each tool the model asks for, then forgets to put the result in the
conversation, so the model answers without it. Its suite must fail on the
checks that grade what the tools returned.
"""

from __future__ import annotations

import sys
from pathlib import Path

import openai
from notes_agent import NotesAgent, main, shared_http_client


class ForgetfulAgent(NotesAgent):
    """Drops every tool result instead of sending it to the model."""

    def send_result(self, call_id: str, result: str) -> None:
        pass  # the bug under test


def make_agent(*, base_url: str, api_key: str, workspace: Path) -> ForgetfulAgent:
    """The in-process factory of the broken variant."""
    client = openai.OpenAI(base_url=base_url, api_key=api_key, http_client=shared_http_client())
    return ForgetfulAgent(client, workspace)


if __name__ == "__main__":
    sys.exit(main(ForgetfulAgent))
