"""An agent on AG2 (the AutoGen fork), with tools of its own or taken from an MCP server.

The two-agent tool pattern of AG2's docs: an ``assistant`` ``ConversableAgent``
(the LLM, its OpenAI config pointed at the model bridge) proposes the tool calls,
and an ``executor`` ``ConversableAgent`` (no LLM, never asks a human) runs them
and speaks for the user. Each tool is registered with both (for the LLM with the
assistant, for execution with the executor): its own functions with
``register_function``, or, served, the tools of an MCP server through
``autogen.mcp.create_toolkit`` on the ``mcp`` SDK's streamable HTTP client.

A turn is one chat, ``executor.a_initiate_chat(assistant, message=...)``, kept
going with ``clear_history=False`` so that the two agents' own message lists are
the history across turns. It ends the AG2 way: the assistant is told to say
``TERMINATE`` when done, the executor ends the chat on a message that holds it,
and the answer is the chat's summary (its last message, ``TERMINATE`` taken out).
Nothing here knows about zeroclaw-eval.

In-process: ``make_agent(base_url=..., api_key=..., workspace=..., mcp_url=None)``
is the ``[eval.agent] factory``; ``mcp_url`` comes with ``tools = "served"``.
Each agent object owns an event loop (the MCP session lives on it, so the chat is
AG2's async one); the model client is AG2's synchronous ``OpenAI``, on one
``httpx.Client`` for the whole process (a new client per case would load the CA
bundle each time, tens of milliseconds).

The broken variants (``make_rewriting_agent``...) put their bug where AG2 lets an
application change how tools run: the executor's ``a_execute_function``, which
AG2 documents as the method to override "to modify the way async functions and
tools are executed", or the chat's history (``clear_history``).
"""

# No `from __future__ import annotations` here: AG2 reads each tool's parameter
# descriptions from its `Annotated[...]` hints at run time, which string
# annotations would reduce to bare types.

import asyncio
import json
import os
import ssl
import threading
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated, Any

import httpx
from autogen import ConversableAgent, LLMConfig, register_function
from autogen.io import IOStream
from autogen.mcp import create_toolkit
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

MODEL = os.environ.get("AG2_AGENT_MODEL", "gpt-4o-mini")
SYSTEM = (
    "You are a helpful assistant. Use the tools when they help. "
    "Reply TERMINATE when the task is done."
)

CITIES = {
    "Paris": "Paris, France: population 2,102,650 (2023); mayor Anne Hidalgo",
    "Tokyo": "Tokyo, Japan: population 14,192,184 (2024); governor Yuriko Koike",
    "Lagos": "Lagos, Nigeria: population 15,388,000 (2023 estimate); governor Babajide Sanwo-Olu",
}

# One SSL context and one synchronous HTTP client for the process: loading the CA
# bundle is what makes a new client cost tens of milliseconds. httpx.Client is
# safe to share between threads. Both are built when first needed.
_shared_lock = threading.Lock()
_shared: dict[str, Any] = {}


def shared_ssl_context() -> ssl.SSLContext:
    """The process's one SSL context."""
    with _shared_lock:
        if "ssl" not in _shared:
            _shared["ssl"] = ssl.create_default_context()
        context: ssl.SSLContext = _shared["ssl"]
        return context


def shared_http_client() -> httpx.Client:
    """The process's one HTTP client for the model, on the shared SSL context."""
    context = shared_ssl_context()
    with _shared_lock:
        if "http" not in _shared:
            _shared["http"] = httpx.Client(verify=context, timeout=60.0)
        client: httpx.Client = _shared["http"]
        return client


class _Quiet:
    """An AG2 IOStream that prints nothing: the console one writes every message
    and tool call to stdout, which belongs to the harness's report."""

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        pass

    def send(self, message: Any) -> None:
        pass

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        return ""


def _terminates(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, str) and "TERMINATE" in content


def register_own_tools(
    assistant: ConversableAgent, executor: ConversableAgent, workspace: Path
) -> None:
    """The agent's own tools, each proposed by the assistant and run by the executor."""

    def echo(message: Annotated[str, "The text to echo."]) -> str:
        return message

    def add(a: Annotated[int, "The first number."], b: Annotated[int, "The second number."]) -> str:
        return str(a + b)

    def city_lookup(city: Annotated[str, "The city's name, e.g. Paris."]) -> str:
        fact = CITIES.get(city)
        if fact is None:
            # AG2 shows the model an exception as "Error: <message>".
            raise ValueError(f"no such city: {city}")
        return fact

    def write_note(
        name: Annotated[str, "The note's name."], text: Annotated[str, "What it says."]
    ) -> str:
        (workspace / f"{name}.txt").write_text(text, encoding="utf-8")
        return f"saved note {name}"

    def read_note(name: Annotated[str, "The note's name."]) -> str:
        path = workspace / f"{name}.txt"
        if not path.is_file():
            raise ValueError(f"no such note: {name}")
        return path.read_text(encoding="utf-8")

    described: dict[Callable[..., Any], str] = {
        echo: "Echo back the given message.",
        add: "Add two whole numbers.",
        city_lookup: "Look up a few facts about a city.",
        write_note: "Save a text note under a name.",
        read_note: "Read a note saved earlier.",
    }
    for function, description in described.items():
        register_function(function, caller=assistant, executor=executor, description=description)


class AG2Agent:
    """One conversation on AG2: the assistant, its executor, their chat and its event loop."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        workspace: Path,
        mcp_url: str | None = None,
        *,
        executor_class: type[ConversableAgent] = ConversableAgent,
        clear_history: bool = False,
    ) -> None:
        self.clear_history = clear_history
        self.loop = asyncio.new_event_loop()
        self.quiet = _Quiet()
        llm_config = LLMConfig(
            {
                "api_type": "openai",
                "model": MODEL,
                "base_url": base_url,
                "api_key": api_key,
                "http_client": shared_http_client(),
            },
            cache_seed=None,  # never answer from a disk cache
        )
        self.assistant = ConversableAgent(
            "assistant",
            system_message=SYSTEM,
            llm_config=llm_config,
            human_input_mode="NEVER",
        )
        self.executor = executor_class(
            "executor",
            llm_config=False,
            human_input_mode="NEVER",
            is_termination_msg=_terminates,
        )
        self.session: asyncio.Task[None] | None = None
        self.stop = asyncio.Event()
        if mcp_url is None:
            register_own_tools(self.assistant, self.executor, workspace)
            return
        try:
            self.loop.run_until_complete(self._connect(mcp_url))
        except BaseException:
            self.loop.close()
            raise

    async def _connect(self, mcp_url: str) -> None:
        """Open the MCP session in a task of its own, which holds it until :meth:`close`:
        the transport's task group must be left by the task that entered it."""
        ready: asyncio.Future[None] = self.loop.create_future()

        async def hold() -> None:
            try:
                async with AsyncExitStack() as stack:
                    http = await stack.enter_async_context(
                        httpx.AsyncClient(verify=shared_ssl_context(), timeout=30.0)
                    )
                    read, write, _ = await stack.enter_async_context(
                        streamable_http_client(mcp_url, http_client=http)
                    )
                    session = await stack.enter_async_context(ClientSession(read, write))
                    await session.initialize()
                    toolkit = await create_toolkit(session, use_mcp_resources=False)
                    toolkit.register_for_llm(self.assistant)
                    toolkit.register_for_execution(self.executor)
                    ready.set_result(None)
                    await self.stop.wait()
            except BaseException as error:
                if not ready.done():
                    ready.set_exception(error)
                raise

        self.session = self.loop.create_task(hold())
        await ready

    def run_turn(self, user_input: str) -> str:
        """Answer one user message (the harness calls this once per turn)."""
        return self.loop.run_until_complete(self._turn(user_input))

    async def _turn(self, user_input: str) -> str:
        with IOStream.set_default(self.quiet):
            result = await self.executor.a_initiate_chat(
                self.assistant,
                message=user_input,
                clear_history=self.clear_history,
                silent=True,
            )
        return str(result.summary).strip()

    def close(self) -> None:
        """End the conversation: close the MCP session, then the loop."""
        try:
            if self.session is not None:
                self.stop.set()
                self.loop.run_until_complete(self.session)
        finally:
            self.loop.close()


def make_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> AG2Agent:
    """The in-process factory: one agent per case."""
    return AG2Agent(base_url, api_key, workspace, mcp_url)


# --- Broken variants: each suite must fail, for the reason its bug gives. ---

Executed = tuple[bool, dict[str, Any]]


class UpperCasingExecutor(ConversableAgent):
    """Runs every tool on its string arguments upper-cased."""

    async def a_execute_function(
        self, func_call: dict[str, Any], call_id: str | None = None, verbose: bool = False
    ) -> Executed:
        arguments = json.loads(func_call.get("arguments") or "{}")
        upper = {k: v.upper() if isinstance(v, str) else v for k, v in arguments.items()}
        func_call = {**func_call, "arguments": json.dumps(upper)}
        return await super().a_execute_function(func_call, call_id, verbose)


class LyingExecutor(ConversableAgent):
    """Tells the model that a failed tool succeeded."""

    async def a_execute_function(
        self, func_call: dict[str, Any], call_id: str | None = None, verbose: bool = False
    ) -> Executed:
        succeeded, result = await super().a_execute_function(func_call, call_id, verbose)
        if not succeeded:
            return True, {**result, "content": "ok, done"}
        return succeeded, result


class LazyExecutor(ConversableAgent):
    """Answers every call to ``echo`` itself, never running it: it "knows" what echo
    returns, and makes that result up."""

    async def a_execute_function(
        self, func_call: dict[str, Any], call_id: str | None = None, verbose: bool = False
    ) -> Executed:
        if func_call.get("name") != "echo":
            return await super().a_execute_function(func_call, call_id, verbose)
        message = json.loads(func_call.get("arguments") or "{}").get("message", "")
        return True, {"name": "echo", "role": "function", "content": str(message)}


class PaddingExecutor(ConversableAgent):
    """Appends a made-up note to every result."""

    async def a_execute_function(
        self, func_call: dict[str, Any], call_id: str | None = None, verbose: bool = False
    ) -> Executed:
        succeeded, result = await super().a_execute_function(func_call, call_id, verbose)
        return succeeded, {**result, "content": f"{result['content']} (cached fallback)"}


class TruncatingExecutor(ConversableAgent):
    """Keeps the first 16 characters of every result."""

    async def a_execute_function(
        self, func_call: dict[str, Any], call_id: str | None = None, verbose: bool = False
    ) -> Executed:
        succeeded, result = await super().a_execute_function(func_call, call_id, verbose)
        return succeeded, {**result, "content": str(result["content"])[:16]}


def _broken(**options: Any) -> Callable[..., AG2Agent]:
    def factory(
        *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
    ) -> AG2Agent:
        return AG2Agent(base_url, api_key, workspace, mcp_url, **options)

    return factory


make_rewriting_agent = _broken(executor_class=UpperCasingExecutor)
make_lying_agent = _broken(executor_class=LyingExecutor)
make_lazy_agent = _broken(executor_class=LazyExecutor)
make_padding_agent = _broken(executor_class=PaddingExecutor)
make_truncating_agent = _broken(executor_class=TruncatingExecutor)
#: Starts every turn's chat afresh: AG2's default, ``clear_history=True``.
make_forgetful_agent = _broken(clear_history=True)
