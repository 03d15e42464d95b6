"""An agent on Strands Agents, with tools of its own or taken from an MCP server.

The agent is a Strands ``Agent`` on its OpenAI model provider (``OpenAIModel``:
Chat Completions at the model bridge), with its own ``@tool`` functions or, served,
the tools of Strands' ``MCPClient`` (the ``mcp`` SDK's streamable HTTP transport).
Its history across turns is the Agent's own ``messages``. Nothing here knows about
zeroclaw-eval: pointed at a real endpoint, it is a real agent.

In-process: ``make_agent(base_url=..., api_key=..., workspace=..., mcp_url=None)``
is the ``[eval.agent] factory``; ``mcp_url`` comes with ``tools = "served"``.
``make_stdio_agent`` is the same agent for a team whose MCP servers are processes:
Strands' ``MCPClient`` spawns ``zeroclaw-eval-mcp-relay`` (the URL as its argument)
and speaks to it over stdio.

Cheap by design: Strands' own ``Agent.__call__`` runs each call on a new event loop
in a new thread, and ``OpenAIModel(client_args=...)`` builds a new ``AsyncOpenAI``
(an SSL context, tens of milliseconds) for every model request. So each worker
thread keeps one event loop and one ``AsyncOpenAI`` for all the cases it runs,
every case takes ``client.with_options(api_key=...)`` (Strands' ``client=``, "to
reuse connection pools within a single event loop"), and turns run with
``invoke_async`` on that loop. The MCP transport's HTTP client is the case's own
(Strands runs each ``MCPClient`` on a thread and loop of its own) but shares one
SSL context.

The broken variants (``make_rewriting_agent``...) put their bug where Strands lets
an application change a tool call or the history: a hook on ``BeforeToolCallEvent``
or ``AfterToolCallEvent``, or a ``ConversationManager``.
"""

from __future__ import annotations

import os

# Strands traces with OpenTelemetry; nothing may be exported from here (only
# loopback exists), and no SDK is configured: say so before it is imported.
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

import asyncio
import ssl
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from openai import AsyncOpenAI
from strands import Agent, tool
from strands.agent.conversation_manager import (
    ConversationManager,
    SlidingWindowConversationManager,
)
from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry
from strands.models.openai import OpenAIModel
from strands.tools.mcp import MCPClient
from strands.tools.tools import PythonAgentTool
from strands.types.tools import ToolResult, ToolUse

MODEL = os.environ.get("STRANDS_AGENT_MODEL", "gpt-4o-mini")
SYSTEM = "You are a helpful assistant. Use the tools when they help."

CITIES = {
    "Paris": "Paris, France: population 2,102,650 (2023); mayor Anne Hidalgo",
    "Tokyo": "Tokyo, Japan: population 14,192,184 (2024); governor Yuriko Koike",
    "Lagos": "Lagos, Nigeria: population 15,388,000 (2023 estimate); governor Babajide Sanwo-Olu",
}

# One SSL context for every HTTP client of the process: loading the CA bundle is
# what makes a new httpx client cost tens of milliseconds. Built when first needed.
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
            http_client = httpx.AsyncClient(verify=shared_ssl_context())
            client = AsyncOpenAI(base_url=base_url, api_key="-", http_client=http_client)
            self.clients[base_url] = client
        return self.loop, client


_runtime = _ThreadRuntime()


def own_tools(workspace: Path) -> list[Any]:
    """The agent's own tools, Strands ``@tool`` functions; the notes live in ``workspace``."""

    @tool
    def echo(message: str) -> str:
        """Echo back the given message.

        Args:
            message: The text to echo.
        """
        return message

    @tool
    def add(a: int, b: int) -> str:
        """Add two whole numbers.

        Args:
            a: The first number.
            b: The second number.
        """
        return str(a + b)

    @tool
    def city_lookup(city: str) -> str:
        """Look up a few facts about a city.

        Args:
            city: The city's name, e.g. Paris.
        """
        fact = CITIES.get(city)
        if fact is None:
            # Strands turns the exception into an error result for the model.
            raise ValueError(f"no such city: {city}")
        return fact

    @tool
    def write_note(name: str, text: str) -> str:
        """Save a text note under a name.

        Args:
            name: The note's name.
            text: What the note says.
        """
        (workspace / f"{name}.txt").write_text(text, encoding="utf-8")
        return f"saved note {name}"

    @tool
    def read_note(name: str) -> str:
        """Read a note saved earlier.

        Args:
            name: The note's name.
        """
        path = workspace / f"{name}.txt"
        if not path.is_file():
            raise ValueError(f"no such note: {name}")
        return path.read_text(encoding="utf-8")

    return [echo, add, city_lookup, write_note, read_note]


def mcp_client(mcp_url: str) -> MCPClient:
    """Strands' MCP client on the ``mcp`` SDK's streamable HTTP transport."""

    @asynccontextmanager
    async def transport() -> AsyncIterator[Any]:
        # The HTTP client is this connection's (the transport leaves a client it
        # was handed open), with the SDK's defaults (redirects followed, a long
        # read for event streams) on the process's one SSL context.
        async with (
            httpx2.AsyncClient(
                verify=shared_ssl_context(),
                follow_redirects=True,
                timeout=httpx2.Timeout(30.0, read=300.0),
            ) as http,
            streamable_http_client(mcp_url, http_client=http) as streams,
        ):
            yield streams

    return MCPClient(transport)


#: The relay installed beside this interpreter (the project's console script).
RELAY = Path(sys.executable).parent / "zeroclaw-eval-mcp-relay"


def stdio_mcp_client(mcp_url: str) -> MCPClient:
    """Strands' MCP client on a server it spawns: the relay, over stdio."""
    # The stdio client starts the server with an environment of its own: the URL
    # goes as the relay's argument.
    server = StdioServerParameters(command=str(RELAY), args=[mcp_url])
    return MCPClient(lambda: stdio_client(server))


class StrandsAgent:
    """One conversation on Strands: its Agent (which keeps the history) on this thread's loop."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        workspace: Path,
        mcp_url: str | None = None,
        *,
        hooks: list[HookProvider] | None = None,
        conversation_manager: ConversationManager | None = None,
        connect: Callable[[str], MCPClient] = mcp_client,
    ) -> None:
        self.loop, client = _runtime.get(base_url)
        model = OpenAIModel(client=client.with_options(api_key=api_key), model_id=MODEL)
        self.mcp: MCPClient | None = None
        if mcp_url is None:
            tools = own_tools(workspace)
        else:
            self.mcp = connect(mcp_url).start()
            try:
                tools = list(self.mcp.list_tools_sync())
            except BaseException:
                self.mcp.stop(None, None, None)
                raise
        self.agent = Agent(
            model=model,
            tools=tools,
            system_prompt=SYSTEM,
            callback_handler=None,  # its default prints every token to stdout
            hooks=list(hooks or ()),
            conversation_manager=conversation_manager or SlidingWindowConversationManager(),
        )

    def run_turn(self, user_input: str) -> str:
        """Answer one user message (the harness calls this once per turn)."""
        result = self.loop.run_until_complete(self.agent.invoke_async(user_input))
        return str(result).strip()

    def close(self) -> None:
        """End the conversation: close the MCP session (the loop and client stay the thread's)."""
        if self.mcp is not None:
            self.mcp.stop(None, None, None)


def make_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> StrandsAgent:
    """The in-process factory: one agent per case."""
    return StrandsAgent(base_url, api_key, workspace, mcp_url)


def make_stdio_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> StrandsAgent:
    """The factory of the agent whose MCP server is a process it spawns (the relay)."""
    return StrandsAgent(base_url, api_key, workspace, mcp_url, connect=stdio_mcp_client)


# --- Broken variants: each suite must fail, for the reason its bug gives. ---


class _ToolCallHook(HookProvider):
    """A hook on every tool call, before the tool runs and after it returned."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.before)
        registry.add_callback(AfterToolCallEvent, self.after)

    def before(self, event: BeforeToolCallEvent) -> None:
        pass

    def after(self, event: AfterToolCallEvent) -> None:
        pass


def _texts(result: ToolResult, change: Callable[[str], str]) -> ToolResult:
    content = [
        {**block, "text": change(block["text"])} if "text" in block else block
        for block in result["content"]
    ]
    return {**result, "content": content}  # type: ignore[typeddict-item]


class UpperCaseArguments(_ToolCallHook):
    """Dispatches every string argument upper-cased."""

    def before(self, event: BeforeToolCallEvent) -> None:
        tool_use = event.tool_use
        arguments = {
            key: value.upper() if isinstance(value, str) else value
            for key, value in tool_use["input"].items()
        }
        event.tool_use = {**tool_use, "input": arguments}


class ReportSuccess(_ToolCallHook):
    """Tells the model that a failed tool succeeded."""

    def after(self, event: AfterToolCallEvent) -> None:
        if event.result["status"] == "error":
            event.result = {
                "toolUseId": event.result["toolUseId"],
                "status": "success",
                "content": [{"text": "ok, done"}],
            }


class AnswerEchoItself(_ToolCallHook):
    """Answers every call to ``echo`` itself, never dispatching it: it "knows" what
    echo returns, and makes that result up."""

    def before(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "echo" or event.selected_tool is None:
            return

        def made_up(tool_use: ToolUse, **kwargs: Any) -> ToolResult:
            message = str(tool_use["input"].get("message", ""))
            return {
                "toolUseId": tool_use["toolUseId"],
                "status": "success",
                "content": [{"text": message}],
            }

        event.selected_tool = PythonAgentTool("echo", event.selected_tool.tool_spec, made_up)


class PadResults(_ToolCallHook):
    """Appends a made-up note to every result."""

    def after(self, event: AfterToolCallEvent) -> None:
        event.result = _texts(event.result, lambda text: text + " (cached fallback)")


class TruncateResults(_ToolCallHook):
    """Keeps the first 16 characters of every result."""

    def after(self, event: AfterToolCallEvent) -> None:
        event.result = _texts(event.result, lambda text: text[:16])


class ForgetEachTurn(SlidingWindowConversationManager):
    """Drops the whole conversation once a turn is over."""

    def apply_management(self, agent: Agent, **kwargs: Any) -> None:
        agent.messages.clear()


def _broken(hook: _ToolCallHook) -> Callable[..., StrandsAgent]:
    def factory(
        *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
    ) -> StrandsAgent:
        return StrandsAgent(base_url, api_key, workspace, mcp_url, hooks=[hook])

    return factory


make_rewriting_agent = _broken(UpperCaseArguments())
make_lying_agent = _broken(ReportSuccess())
make_lazy_agent = _broken(AnswerEchoItself())
make_padding_agent = _broken(PadResults())
make_truncating_agent = _broken(TruncateResults())


def make_forgetful_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> StrandsAgent:
    """Forgets the earlier turns: its conversation manager empties the history."""
    return StrandsAgent(
        base_url, api_key, workspace, mcp_url, conversation_manager=ForgetEachTurn()
    )
