"""An agent on LangGraph, with tools of its own or taken from an MCP server.

The agent is LangChain's ``create_agent`` (the LangGraph ReAct graph that replaced
``langgraph.prebuilt.create_react_agent`` in LangGraph 1.0) on LangChain's OpenAI
chat model (``ChatOpenAI``: Chat Completions at the model bridge), with its own
``@tool`` functions or, served, the tools of ``langchain-mcp-adapters``'
``MultiServerMCPClient`` (streamable HTTP). Its history across turns is the
graph's own: an ``InMemorySaver`` checkpointer and one ``thread_id`` per
conversation. Nothing here knows about zeroclaw-eval: pointed at a real endpoint,
it is a real agent.

In-process: ``make_agent(base_url=..., api_key=..., workspace=..., mcp_url=None)``
is the ``[eval.agent] factory``; ``mcp_url`` comes with ``tools = "served"``.

Cheap by design: ``ChatOpenAI`` builds an ``AsyncOpenAI`` of its own, and without
``http_async_client`` a new HTTP client with it (an SSL context, tens of
milliseconds). So each worker thread keeps one event loop and one
``httpx.AsyncClient`` (the loop's: its connections belong to it) for all the
cases it runs, handed to every case's ``ChatOpenAI``; the MCP client's HTTP
clients share the process's one SSL context. The own tools are built once, and
find the case's workspace in the graph's runtime context.

The broken variants (``make_rewriting_agent``...) put their bug where LangChain
lets an application change a tool call: an ``AgentMiddleware``'s
``awrap_tool_call``; the forgetful one starts a new checkpointer thread each turn.
"""

from __future__ import annotations

import os

# LangSmith traces only when asked to; say it is not, before anything is imported.
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")

import asyncio
import ssl
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

MODEL = os.environ.get("LANGGRAPH_AGENT_MODEL", "gpt-4o-mini")
SYSTEM = "You are a helpful assistant. Use the tools when they help."

CITIES = {
    "Paris": "Paris, France: population 2,102,650 (2023); mayor Anne Hidalgo",
    "Tokyo": "Tokyo, Japan: population 14,192,184 (2024); governor Yuriko Koike",
    "Lagos": "Lagos, Nigeria: population 15,388,000 (2023 estimate); governor Babajide Sanwo-Olu",
}

# One SSL context and one sync HTTP client for the process: loading the CA bundle
# is what makes a new httpx client cost tens of milliseconds. Built when first needed.
_shared_lock = threading.Lock()
_ssl_context: ssl.SSLContext | None = None
_sync_client: httpx.Client | None = None


def shared_ssl_context() -> ssl.SSLContext:
    """The process's one SSL context (thread-safe; made on first use)."""
    global _ssl_context
    with _shared_lock:
        if _ssl_context is None:
            _ssl_context = ssl.create_default_context()
        return _ssl_context


def shared_sync_client() -> httpx.Client:
    """The process's one sync HTTP client: ChatOpenAI builds a sync OpenAI client too,
    never used here (every call is async), and it should cost nothing."""
    global _sync_client
    context = shared_ssl_context()
    with _shared_lock:
        if _sync_client is None:
            _sync_client = httpx.Client(verify=context)
        return _sync_client


class _ThreadRuntime(threading.local):
    """This thread's event loop and async HTTP client, kept for every case it runs."""

    loop: asyncio.AbstractEventLoop | None = None
    http: httpx.AsyncClient | None = None

    def get(self) -> tuple[asyncio.AbstractEventLoop, httpx.AsyncClient]:
        if self.loop is None or self.http is None:
            self.loop = asyncio.new_event_loop()
            # An async client's connections belong to the loop that opened them:
            # one client per loop, and so per thread.
            self.http = httpx.AsyncClient(verify=shared_ssl_context())
        return self.loop, self.http


_runtime = _ThreadRuntime()


@dataclass(frozen=True)
class CaseContext:
    """What the own tools need of the conversation: where its notes live."""

    workspace: Path


@tool(parse_docstring=True)
def echo(message: str) -> str:
    """Echo back the given message.

    Args:
        message: The text to echo.
    """
    return message


@tool(parse_docstring=True)
def add(a: int, b: int) -> str:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return str(a + b)


@tool(parse_docstring=True)
def city_lookup(city: str) -> str:
    """Look up a few facts about a city.

    Args:
        city: The city's name, e.g. Paris.
    """
    fact = CITIES.get(city)
    if fact is None:
        # A ToolException is LangChain's tool error: with handle_tool_error the
        # model is shown its text as a failed tool result.
        raise ToolException(f"no such city: {city}")
    return fact


@tool(parse_docstring=True)
def write_note(name: str, text: str, runtime: ToolRuntime[CaseContext]) -> str:
    """Save a text note under a name.

    Args:
        name: The note's name.
        text: What the note says.
    """
    (runtime.context.workspace / f"{name}.txt").write_text(text, encoding="utf-8")
    return f"saved note {name}"


@tool(parse_docstring=True)
def read_note(name: str, runtime: ToolRuntime[CaseContext]) -> str:
    """Read a note saved earlier.

    Args:
        name: The note's name.
    """
    path = runtime.context.workspace / f"{name}.txt"
    if not path.is_file():
        raise ToolException(f"no such note: {name}")
    return path.read_text(encoding="utf-8")


for _failing in (city_lookup, read_note):
    _failing.handle_tool_error = True

OWN_TOOLS: list[BaseTool] = [echo, add, city_lookup, write_note, read_note]


def mcp_http_client(
    headers: dict[str, str] | None = None,
    timeout: httpx.Timeout | None = None,
    auth: httpx.Auth | None = None,
) -> httpx.AsyncClient:
    """The MCP connection's HTTP client, as the ``mcp`` SDK makes it (redirects
    followed, a long read for event streams), on the process's one SSL context."""
    return httpx.AsyncClient(
        headers=headers,
        timeout=timeout or httpx.Timeout(30.0, read=300.0),
        auth=auth,
        follow_redirects=True,
        verify=shared_ssl_context(),
    )


class LangGraphAgent:
    """One conversation on LangGraph: its graph, checkpointer thread and this thread's loop."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        workspace: Path,
        mcp_url: str | None = None,
        *,
        middleware: list[AgentMiddleware] | None = None,
        forget: bool = False,
    ) -> None:
        self.loop, http = _runtime.get()
        model = ChatOpenAI(
            model=MODEL,
            base_url=base_url,
            api_key=api_key,
            http_async_client=http,
            http_client=shared_sync_client(),
            max_retries=0,
        )
        if mcp_url is None:
            tools: list[BaseTool] = OWN_TOOLS
        else:
            client = MultiServerMCPClient(
                {
                    "zeroclaw": {
                        "url": mcp_url,
                        "transport": "streamable_http",
                        "httpx_client_factory": mcp_http_client,
                    }
                }
            )
            tools = self.loop.run_until_complete(client.get_tools())
        self.graph = create_agent(
            model,
            tools,
            system_prompt=SYSTEM,
            middleware=list(middleware or ()),
            context_schema=CaseContext,
            checkpointer=InMemorySaver(),
        )
        self.context = CaseContext(workspace)
        self.thread_id = str(uuid.uuid4())
        self.forget = forget

    def run_turn(self, user_input: str) -> str:
        """Answer one user message (the harness calls this once per turn)."""
        return self.loop.run_until_complete(self._turn(user_input))

    async def _turn(self, user_input: str) -> str:
        if self.forget:
            self.thread_id = str(uuid.uuid4())
        state = await self.graph.ainvoke(
            {"messages": [{"role": "user", "content": user_input}]},
            {"configurable": {"thread_id": self.thread_id}},
            context=self.context,
        )
        return str(state["messages"][-1].text).strip()

    def close(self) -> None:
        """End the conversation (the loop and its HTTP client stay the thread's)."""


def make_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> LangGraphAgent:
    """The in-process factory: one agent per case."""
    return LangGraphAgent(base_url, api_key, workspace, mcp_url)


# --- Broken variants: each suite must fail, for the reason its bug gives. ---

Handler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]


def _with_text(message: ToolMessage, change: Callable[[str], str]) -> ToolMessage:
    """The tool message with each of its texts changed."""
    content = message.content
    if isinstance(content, str):
        changed: Any = change(content)
    else:
        changed = [
            {**block, "text": change(block["text"])}
            if isinstance(block, dict) and isinstance(block.get("text"), str)
            else block
            for block in content
        ]
    return message.model_copy(update={"content": changed})


class UpperCaseArguments(AgentMiddleware):
    """Dispatches every string argument upper-cased."""

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Handler) -> Any:
        call = request.tool_call
        arguments = {
            key: value.upper() if isinstance(value, str) else value
            for key, value in call["args"].items()
        }
        return await handler(request.override(tool_call={**call, "args": arguments}))


class ReportSuccess(AgentMiddleware):
    """Tells the model that a failed tool succeeded."""

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Handler) -> Any:
        result = await handler(request)
        if isinstance(result, ToolMessage) and result.status == "error":
            return result.model_copy(update={"content": "ok, done", "status": "success"})
        return result


class AnswerEchoItself(AgentMiddleware):
    """Answers every call to ``echo`` itself, never dispatching it: it "knows" what
    echo returns, and makes that result up."""

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Handler) -> Any:
        call = request.tool_call
        if call["name"] != "echo":
            return await handler(request)
        return ToolMessage(
            content=str(call["args"].get("message", "")),
            name="echo",
            tool_call_id=call["id"],
        )


class PadResults(AgentMiddleware):
    """Appends a made-up note to every result."""

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Handler) -> Any:
        result = await handler(request)
        if isinstance(result, ToolMessage):
            return _with_text(result, lambda text: text + " (cached fallback)")
        return result


class TruncateResults(AgentMiddleware):
    """Keeps the first 16 characters of every result."""

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Handler) -> Any:
        result = await handler(request)
        if isinstance(result, ToolMessage):
            return _with_text(result, lambda text: text[:16])
        return result


def _broken(middleware: AgentMiddleware) -> Callable[..., LangGraphAgent]:
    def factory(
        *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
    ) -> LangGraphAgent:
        return LangGraphAgent(base_url, api_key, workspace, mcp_url, middleware=[middleware])

    return factory


make_rewriting_agent = _broken(UpperCaseArguments())
make_lying_agent = _broken(ReportSuccess())
make_lazy_agent = _broken(AnswerEchoItself())
make_padding_agent = _broken(PadResults())
make_truncating_agent = _broken(TruncateResults())


def make_forgetful_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> LangGraphAgent:
    """Forgets the earlier turns: each turn runs on a new checkpointer thread."""
    return LangGraphAgent(base_url, api_key, workspace, mcp_url, forget=True)
