"""Agent factories that fail in the ways a team's code can."""

from __future__ import annotations

from pathlib import Path


def raising(*, base_url: str, api_key: str, workspace: Path) -> object:
    raise ValueError("no credentials for the vector store")


def no_run_turn(*, base_url: str, api_key: str, workspace: Path) -> object:
    return object()


class Raising:
    def run_turn(self, user_input: str) -> str:
        raise RuntimeError(f"cannot handle {user_input!r}")


def raising_turn(*, base_url: str, api_key: str, workspace: Path) -> Raising:
    return Raising()


NOT_CALLABLE = 42
