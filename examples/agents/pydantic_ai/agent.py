"""An agent on pydantic-ai, with tools of its own or taken from an MCP server.

The agent is a pydantic-ai ``Agent`` on its OpenAI Chat Completions model
(``OpenAIChatModel`` with an ``OpenAIProvider`` on a client of ours), with its own
tools (``@agent.tool_plain``, and ``@agent.tool`` for the two that need the case's
workspace, their ``deps``) or, served, an ``MCPToolset`` on the case's streamable
HTTP URL. Its history across turns is pydantic-ai's own message list: each turn
runs with ``message_history=result.all_messages()`` of the turn before. Nothing
here knows about zeroclaw-eval: pointed at a real endpoint, it is a real agent.

In-process: ``make_agent(base_url=..., api_key=..., workspace=..., mcp_url=None)``
is the ``[eval.agent] factory``; ``mcp_url`` comes with ``tools = "served"``.

Cheap by design: the two ``Agent`` objects (own tools, served) are built once for
the process, as pydantic-ai means them to be (stateless, reused by every run; the
model, the deps and the MCP toolset are given per run). Each worker thread keeps
one event loop, one ``AsyncOpenAI`` and one HTTP client for MCP for all the cases
it runs; every case takes ``client.with_options(api_key=...)`` and a toolset that
borrows the thread's HTTP client. The toolset is entered once per case, in a task
of the agent's loop that holds the MCP session until ``close()``.

A tool that fails the way a missing thing fails raises ``ToolFailed`` (the
model sees the failure and does not retry); served, the toolset does the same
with ``tool_error_behavior="failed"``. The broken variants
(``make_rewriting_agent``...) put their bug where pydantic-ai lets an application
change an MCP tool call, the toolset's ``process_tool_call`` hook, or in the
message history kept across turns.
"""

from __future__ import annotations

# No telemetry to turn off: pydantic-ai-slim instruments only when told to
# (``instrument=``, ``Agent.instrument_all()``), and ships ``logfire-api``, a no-op
# without logfire itself; prices are updated from the network only on request.
import asyncio
import os
import ssl
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
from openai import AsyncOpenAI
from pydantic_ai import Agent, RunContext, ToolFailed
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

if TYPE_CHECKING:
    # Imported where the tools are served: the MCP client (FastMCP) costs about a
    # second of CPU to import, which an agent with its own tools need not pay.
    from pydantic_ai.mcp import CallToolFunc, MCPToolset

MODEL = os.environ.get("PYDANTIC_AI_AGENT_MODEL", "gpt-4o-mini")
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
    """This thread's event loop and HTTP clients, kept for every case it runs."""

    loop: asyncio.AbstractEventLoop | None = None
    mcp_http: httpx2.AsyncClient | None = None
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

    def mcp_client(self) -> httpx2.AsyncClient:
        """This loop's HTTP client for MCP (a toolset borrows it and never closes it)."""
        if self.mcp_http is None:
            # The MCP SDK's defaults: redirects followed, a long read for event streams.
            self.mcp_http = httpx2.AsyncClient(
                verify=shared_ssl_context(),
                follow_redirects=True,
                timeout=httpx2.Timeout(30.0, read=300.0),
            )
        return self.mcp_http


_runtime = _ThreadRuntime()


@dataclass
class Case:
    """What the own tools need of the conversation they run in (the run's deps)."""

    workspace: Path


own_agent = Agent(instructions=INSTRUCTIONS, deps_type=Case)
served_agent = Agent(instructions=INSTRUCTIONS)


@own_agent.tool_plain
def echo(message: str) -> str:
    """Echo back the given message.

    Args:
        message: The text to echo.
    """
    return message


@own_agent.tool_plain
def add(a: int, b: int) -> str:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return str(a + b)


@own_agent.tool_plain
def city_lookup(city: str) -> str:
    """Look up a few facts about a city.

    Args:
        city: The city's name, e.g. Paris.
    """
    fact = CITIES.get(city)
    if fact is None:
        # A missing thing: the call is done and failed (ToolFailed), not one for the
        # model to retry with other arguments (ModelRetry).
        raise ToolFailed(f"no such city: {city}")
    return fact


@own_agent.tool
def write_note(ctx: RunContext[Case], name: str, text: str) -> str:
    """Save a text note under a name.

    Args:
        name: The note's name.
        text: What the note says.
    """
    (ctx.deps.workspace / f"{name}.txt").write_text(text, encoding="utf-8")
    return f"saved note {name}"


@own_agent.tool
def read_note(ctx: RunContext[Case], name: str) -> str:
    """Read a note saved earlier.

    Args:
        name: The note's name.
    """
    path = ctx.deps.workspace / f"{name}.txt"
    if not path.is_file():
        raise ToolFailed(f"no such note: {name}")
    return path.read_text(encoding="utf-8")


if TYPE_CHECKING:
    #: A hook on every MCP tool call: ``process_tool_call(ctx, call_tool, name, args)``.
    ProcessToolCall = Callable[[RunContext[Any], CallToolFunc, str, dict[str, Any]], Awaitable[Any]]


class PydanticAiAgent:
    """One conversation on pydantic-ai, on this thread's loop."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        workspace: Path,
        mcp_url: str | None = None,
        *,
        process_tool_call: ProcessToolCall | None = None,
        keeps_history: bool = True,
    ) -> None:
        self.loop, client = _runtime.get(base_url)
        provider = OpenAIProvider(openai_client=client.with_options(api_key=api_key))
        self.model = OpenAIChatModel(MODEL, provider=provider)
        self.case = Case(workspace)
        self.keeps_history = keeps_history
        self.history: list[ModelMessage] = []
        self.toolset: MCPToolset[Any] | None = None
        self._held: asyncio.Task[None] | None = None
        self._release: asyncio.Event | None = None
        if mcp_url is not None:
            from pydantic_ai.mcp import MCPToolset

            self.toolset = MCPToolset(
                mcp_url,
                tool_error_behavior="failed",
                process_tool_call=process_tool_call,
                http_client=_runtime.mcp_client(),
            )
            self.loop.run_until_complete(self._connect())

    async def _connect(self) -> None:
        """Enter the toolset in a task that holds its MCP session until ``close()``."""
        assert self.toolset is not None
        toolset = self.toolset
        connected: asyncio.Future[None] = self.loop.create_future()
        self._release = release = asyncio.Event()

        async def hold() -> None:
            try:
                async with toolset:
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
        if self.toolset is None:
            result = await own_agent.run(
                user_input, model=self.model, deps=self.case, message_history=self.history
            )
        else:
            result = await served_agent.run(
                user_input,
                model=self.model,
                toolsets=[self.toolset],
                message_history=self.history,
            )
        # The forgetful variant drops what the turn said; an honest agent keeps it.
        self.history = result.all_messages() if self.keeps_history else []
        return result.output

    def close(self) -> None:
        """End the conversation: leave the toolset (the loop and clients stay the thread's)."""
        if self._held is not None and self._release is not None:
            self._release.set()
            self.loop.run_until_complete(self._held)
            self._held = None


def make_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> PydanticAiAgent:
    """The in-process factory: one agent per case."""
    return PydanticAiAgent(base_url, api_key, workspace, mcp_url)


# --- Broken variants: each suite must fail, for the reason its bug gives. ---


async def upper_case_arguments(
    ctx: RunContext[Any], call_tool: CallToolFunc, name: str, args: dict[str, Any]
) -> Any:
    """Dispatches every string argument upper-cased."""
    changed = {
        key: value.upper() if isinstance(value, str) else value for key, value in args.items()
    }
    return await call_tool(name, changed)


async def report_success(
    ctx: RunContext[Any], call_tool: CallToolFunc, name: str, args: dict[str, Any]
) -> Any:
    """Tells the model that a failed tool succeeded."""
    try:
        return await call_tool(name, args)
    except ToolFailed:
        return "ok, done"


async def answer_echo_itself(
    ctx: RunContext[Any], call_tool: CallToolFunc, name: str, args: dict[str, Any]
) -> Any:
    """Answers every call to ``echo`` itself, never dispatching it: it "knows" what
    echo returns, and makes that result up."""
    if name == "echo":
        return str(args.get("message", ""))
    return await call_tool(name, args)


def _changing(change: Callable[[str], str]) -> ProcessToolCall:
    """A hook that changes the text of every result, a failure's included."""

    async def hook(
        ctx: RunContext[Any], call_tool: CallToolFunc, name: str, args: dict[str, Any]
    ) -> Any:
        try:
            result = await call_tool(name, args)
        except ToolFailed as failed:
            raise ToolFailed(change(failed.message)) from failed
        return change(result) if isinstance(result, str) else result

    return hook


pad_results = _changing(lambda text: text + " (cached fallback)")
truncate_results = _changing(lambda text: text[:16])


def _broken(hook: ProcessToolCall) -> Callable[..., PydanticAiAgent]:
    def factory(
        *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
    ) -> PydanticAiAgent:
        return PydanticAiAgent(base_url, api_key, workspace, mcp_url, process_tool_call=hook)

    return factory


make_rewriting_agent = _broken(upper_case_arguments)
make_lying_agent = _broken(report_success)
make_lazy_agent = _broken(answer_echo_itself)
make_padding_agent = _broken(pad_results)
make_truncating_agent = _broken(truncate_results)


def make_forgetful_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> PydanticAiAgent:
    """Forgets the earlier turns: each turn runs without the message history."""
    return PydanticAiAgent(base_url, api_key, workspace, mcp_url, keeps_history=False)
