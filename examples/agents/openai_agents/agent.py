"""An agent on the OpenAI Agents SDK, with tools of its own or taken from an MCP server.

The agent is the SDK's ``Agent`` on its Chat Completions model
(``OpenAIChatCompletionsModel``, at the model bridge), with its own
``@function_tool`` functions or, served, the tools of one
``MCPServerStreamableHttp``. Its history across turns is the SDK's own input list:
``result.to_input_list()`` of a turn, with the next user message, is the next
turn's input. Nothing here knows about zeroclaw-eval: pointed at a real endpoint,
it is a real agent.

In-process: ``make_agent(base_url=..., api_key=..., workspace=..., mcp_url=None)``
is the ``[eval.agent] factory``; ``mcp_url`` comes with ``tools = "served"``.

Cheap by design: each worker thread keeps one event loop and one ``AsyncOpenAI``
for all the cases it runs (a new client builds an SSL context, tens of
milliseconds), and every case takes ``client.with_options(api_key=...)``. The own
tools are built once for the process: they find the case's workspace in the run's
context (``RunContextWrapper``), not in a closure. Served, the MCP server is
connected once per case, in a task of the agent's loop that holds the connection
until ``close()`` (the transport's task group must be left by the task that
entered it); its HTTP client is the connection's own but shares the process's one
SSL context.

The broken variants (``make_rewriting_agent``...) put their bug where the SDK lets
an application change a tool call or the history: the MCP server's ``call_tool``
(a subclass of ``MCPServerStreamableHttp``), or the input list kept across turns.
"""

from __future__ import annotations

import os

# No trace may leave the process (only loopback exists here): say so before the
# SDK is imported, and again below through its own switch.
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

import asyncio
import ssl
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from agents.mcp import MCPServerStreamableHttp
from mcp.types import CallToolResult, TextContent
from openai import AsyncOpenAI

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunContextWrapper,
    Runner,
    function_tool,
    set_tracing_disabled,
)

set_tracing_disabled(True)

MODEL = os.environ.get("OPENAI_AGENTS_MODEL", "gpt-4o-mini")
INSTRUCTIONS = "You are a helpful assistant. Use the tools when they help."

CITIES = {
    "Paris": "Paris, France: population 2,102,650 (2023); mayor Anne Hidalgo",
    "Tokyo": "Tokyo, Japan: population 14,192,184 (2024); governor Yuriko Koike",
    "Lagos": "Lagos, Nigeria: population 15,388,000 (2023 estimate); governor Babajide Sanwo-Olu",
}

# One SSL context for every HTTP client of the process: loading the CA bundle is
# what makes a new client cost tens of milliseconds. Built when first needed.
_ssl_lock = threading.Lock()
_ssl_context: ssl.SSLContext | None = None


def shared_ssl_context() -> ssl.SSLContext:
    """The process's one SSL context (thread-safe; made on first use)."""
    global _ssl_context
    with _ssl_lock:
        if _ssl_context is None:
            _ssl_context = ssl.create_default_context()
        return _ssl_context


class _ThreadRuntime(threading.local):
    """This thread's event loop and model clients, kept for every case it runs."""

    loop: asyncio.AbstractEventLoop | None = None
    clients: dict[str, AsyncOpenAI]

    def __init__(self) -> None:
        self.clients = {}

    def get(self, base_url: str) -> tuple[asyncio.AbstractEventLoop, AsyncOpenAI]:
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
        client = self.clients.get(base_url)
        if client is None:
            # An AsyncOpenAI's connections belong to the loop that opened them:
            # one client per loop, and so per thread.
            http_client = httpx2.AsyncClient(verify=shared_ssl_context())
            client = AsyncOpenAI(base_url=base_url, api_key="-", http_client=http_client)
            self.clients[base_url] = client
        return self.loop, client


_runtime = _ThreadRuntime()


@dataclass
class Case:
    """What the own tools need of the conversation they run in (the run's context)."""

    workspace: Path


@function_tool
def echo(message: str) -> str:
    """Echo back the given message.

    Args:
        message: The text to echo.
    """
    return message


@function_tool
def add(a: int, b: int) -> str:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return str(a + b)


@function_tool
def city_lookup(city: str) -> str:
    """Look up a few facts about a city.

    Args:
        city: The city's name, e.g. Paris.
    """
    fact = CITIES.get(city)
    if fact is None:
        # The SDK's default failure handling turns this into an error text for the model.
        raise ValueError(f"no such city: {city}")
    return fact


@function_tool
def write_note(ctx: RunContextWrapper[Case], name: str, text: str) -> str:
    """Save a text note under a name.

    Args:
        name: The note's name.
        text: What the note says.
    """
    (ctx.context.workspace / f"{name}.txt").write_text(text, encoding="utf-8")
    return f"saved note {name}"


@function_tool
def read_note(ctx: RunContextWrapper[Case], name: str) -> str:
    """Read a note saved earlier.

    Args:
        name: The note's name.
    """
    path = ctx.context.workspace / f"{name}.txt"
    if not path.is_file():
        raise ValueError(f"no such note: {name}")
    return path.read_text(encoding="utf-8")


OWN_TOOLS = [echo, add, city_lookup, write_note, read_note]


def _mcp_http_client(
    headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
) -> httpx2.AsyncClient:
    """The MCP connection's HTTP client (mcp 2.x speaks ``httpx2``), on the one SSL context."""
    return httpx2.AsyncClient(
        headers=headers, timeout=timeout, auth=auth, verify=shared_ssl_context()
    )


def case_tools_server(
    mcp_url: str, server_class: type[MCPServerStreamableHttp] = MCPServerStreamableHttp
) -> MCPServerStreamableHttp:
    """The case's MCP server over streamable HTTP, its tool list fetched once."""
    return server_class(
        params={"url": mcp_url, "httpx_client_factory": _mcp_http_client},
        name="case tools",
        cache_tools_list=True,
    )


class AgentsSdkAgent:
    """One conversation on the Agents SDK, on this thread's loop."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        workspace: Path,
        mcp_url: str | None = None,
        *,
        server_class: type[MCPServerStreamableHttp] = MCPServerStreamableHttp,
        keeps_history: bool = True,
    ) -> None:
        self.loop, client = _runtime.get(base_url)
        model = OpenAIChatCompletionsModel(
            model=MODEL, openai_client=client.with_options(api_key=api_key)
        )
        self.case = Case(workspace)
        self.keeps_history = keeps_history
        self.history: list[Any] = []
        self.server: MCPServerStreamableHttp | None = None
        self._held: asyncio.Task[None] | None = None
        self._release: asyncio.Event | None = None
        if mcp_url is not None:
            self.server = case_tools_server(mcp_url, server_class)
            self.loop.run_until_complete(self._connect())
        self.agent: Agent[Case] = Agent(
            name="assistant",
            instructions=INSTRUCTIONS,
            model=model,
            tools=[] if self.server else list(OWN_TOOLS),
            mcp_servers=[self.server] if self.server else [],
        )

    async def _connect(self) -> None:
        """Open the MCP connection in a task that holds it until ``close()``."""
        assert self.server is not None
        server = self.server
        connected: asyncio.Future[None] = self.loop.create_future()
        self._release = release = asyncio.Event()

        async def hold() -> None:
            try:
                async with server:
                    connected.set_result(None)
                    await release.wait()
            except BaseException as error:
                if not connected.done():
                    connected.set_exception(error)
                raise

        self._held = self.loop.create_task(hold())
        await connected

    def run_turn(self, user_input: str) -> str:
        """Answer one user message (the harness calls this once per turn)."""
        return self.loop.run_until_complete(self._turn(user_input))

    async def _turn(self, user_input: str) -> str:
        items = [*self.history, {"role": "user", "content": user_input}]
        result = await Runner.run(self.agent, items, context=self.case)
        # The forgetful variant drops what the turn said; an honest agent keeps it.
        self.history = result.to_input_list() if self.keeps_history else []
        return str(result.final_output)

    def close(self) -> None:
        """End the conversation: close the MCP session (the loop and client stay the thread's)."""
        if self._held is not None and self._release is not None:
            self._release.set()
            self.loop.run_until_complete(self._held)
            self._held = None


def make_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> AgentsSdkAgent:
    """The in-process factory: one agent per case."""
    return AgentsSdkAgent(base_url, api_key, workspace, mcp_url)


# --- Broken variants: each suite must fail, for the reason its bug gives. ---


def _text_result(text: str, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)


class UpperCaseArguments(MCPServerStreamableHttp):
    """Dispatches every string argument upper-cased."""

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        changed = {
            key: value.upper() if isinstance(value, str) else value
            for key, value in (arguments or {}).items()
        }
        return await super().call_tool(tool_name, changed, meta)


class ReportSuccess(MCPServerStreamableHttp):
    """Tells the model that a failed tool succeeded."""

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        result = await super().call_tool(tool_name, arguments, meta)
        return _text_result("ok, done") if result.is_error else result


class AnswerEchoItself(MCPServerStreamableHttp):
    """Answers every call to ``echo`` itself, never dispatching it: it "knows" what
    echo returns, and makes that result up."""

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        if tool_name == "echo":
            return _text_result(str((arguments or {}).get("message", "")))
        return await super().call_tool(tool_name, arguments, meta)


class _ChangeResults(MCPServerStreamableHttp):
    """Changes the text of every result the server sends back, an error's included."""

    def change(self, text: str) -> str:
        return text

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        result = await super().call_tool(tool_name, arguments, meta)
        content = [
            TextContent(type="text", text=self.change(block.text))
            if block.type == "text"
            else block
            for block in result.content
        ]
        return result.model_copy(update={"content": content})


class PadResults(_ChangeResults):
    """Appends a made-up note to every result."""

    def change(self, text: str) -> str:
        return text + " (cached fallback)"


class TruncateResults(_ChangeResults):
    """Keeps the first 16 characters of every result."""

    def change(self, text: str) -> str:
        return text[:16]


def _broken(server_class: type[MCPServerStreamableHttp]) -> Any:
    def factory(
        *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
    ) -> AgentsSdkAgent:
        return AgentsSdkAgent(base_url, api_key, workspace, mcp_url, server_class=server_class)

    factory.__doc__ = server_class.__doc__
    return factory


make_rewriting_agent = _broken(UpperCaseArguments)
make_lying_agent = _broken(ReportSuccess)
make_lazy_agent = _broken(AnswerEchoItself)
make_padding_agent = _broken(PadResults)
make_truncating_agent = _broken(TruncateResults)


def make_forgetful_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> AgentsSdkAgent:
    """Forgets the earlier turns: each turn's input is the new user message alone."""
    return AgentsSdkAgent(base_url, api_key, workspace, mcp_url, keeps_history=False)
