"""An agent on LlamaIndex, with tools of its own or taken from an MCP server.

The agent is a LlamaIndex ``FunctionAgent`` (its agent workflow) on ``OpenAILike``
(Chat Completions at the model bridge, streamed), with its own ``FunctionTool``s
or, served, the tools of ``llama-index-tools-mcp``'s ``McpToolSpec`` on a
``BasicMCPClient`` (the ``mcp`` SDK's streamable HTTP transport). Its history
across turns is the agent's own memory, a ``ChatMemoryBuffer`` handed to every
run (a workflow ``Context`` reused across runs drops it: see README.md). Nothing
here knows about zeroclaw-eval: pointed at a real endpoint, it is a real agent.

In-process: ``make_agent(base_url=..., api_key=..., workspace=..., mcp_url=None)``
is the ``[eval.agent] factory``; ``mcp_url`` comes with ``tools = "served"``.

Cheap by design: ``OpenAILike`` builds an ``AsyncOpenAI`` of its own, and without
``async_http_client`` a new HTTP client with it (an SSL context, tens of
milliseconds); ``BasicMCPClient`` builds one in its constructor unless handed
one. So each worker thread keeps one event loop, one ``httpx.AsyncClient`` for
the model and one ``httpx2.AsyncClient`` for MCP (mcp 2.x speaks ``httpx2``), the
loop's, for all the cases it runs.

The broken variants (``make_rewriting_agent``...) put their bug where LlamaIndex
lets an application change a tool call: the MCP client the tool spec calls
(a ``BasicMCPClient`` whose ``call_tool`` is overridden); the forgetful one hands
the agent no memory, so each run starts a new one.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import httpx2
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai_like import OpenAILike
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec
from mcp import types

MODEL = os.environ.get("LLAMAINDEX_AGENT_MODEL", "gpt-4o-mini")
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
    """This thread's event loop and HTTP clients, kept for every case it runs."""

    loop: asyncio.AbstractEventLoop | None = None
    model_http: httpx.AsyncClient
    mcp_http: httpx2.AsyncClient

    def get(self) -> tuple[asyncio.AbstractEventLoop, httpx.AsyncClient, httpx2.AsyncClient]:
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
            # An async client's connections belong to the loop that opened them:
            # one of each per loop, and so per thread.
            self.model_http = httpx.AsyncClient(verify=shared_ssl_context())
            # The mcp SDK's defaults: redirects followed, a long read for event streams.
            self.mcp_http = httpx2.AsyncClient(
                verify=shared_ssl_context(),
                follow_redirects=True,
                timeout=httpx2.Timeout(30.0, read=300.0),
            )
        return self.loop, self.model_http, self.mcp_http


_runtime = _ThreadRuntime()


def echo(message: str) -> str:
    """Echo back the given message."""
    return message


def add(a: int, b: int) -> str:
    """Add two whole numbers, a and b."""
    return str(a + b)


def city_lookup(city: str) -> str:
    """Look up a few facts about a city, e.g. Paris."""
    fact = CITIES.get(city)
    if fact is None:
        # The agent workflow shows the model the text of what a tool raised.
        raise ValueError(f"no such city: {city}")
    return fact


# The tools that need nothing of the case, built once.
STATELESS_TOOLS = [FunctionTool.from_defaults(fn) for fn in (echo, add, city_lookup)]


def own_tools(workspace: Path) -> list[FunctionTool]:
    """The agent's own tools; the notes live in ``workspace``."""

    def write_note(name: str, text: str) -> str:
        """Save a text note under a name."""
        (workspace / f"{name}.txt").write_text(text, encoding="utf-8")
        return f"saved note {name}"

    def read_note(name: str) -> str:
        """Read a note saved earlier, by its name."""
        path = workspace / f"{name}.txt"
        if not path.is_file():
            raise ValueError(f"no such note: {name}")
        return path.read_text(encoding="utf-8")

    return [*STATELESS_TOOLS, *(FunctionTool.from_defaults(fn) for fn in (write_note, read_note))]


class LlamaIndexAgent:
    """One conversation on LlamaIndex: its FunctionAgent, its Context and this thread's loop."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        workspace: Path,
        mcp_url: str | None = None,
        *,
        mcp_client: type[BasicMCPClient] = BasicMCPClient,
        forget: bool = False,
    ) -> None:
        self.loop, model_http, mcp_http = _runtime.get()
        llm = OpenAILike(
            model=MODEL,
            api_base=base_url,
            api_key=api_key,
            is_chat_model=True,
            is_function_calling_model=True,
            max_retries=0,
            async_http_client=model_http,
        )
        if mcp_url is None:
            tools: list[Any] = own_tools(workspace)
        else:
            spec = McpToolSpec(client=mcp_client(mcp_url, http_client=mcp_http))
            tools = self.loop.run_until_complete(spec.to_tool_list_async())
        self.agent = FunctionAgent(tools=tools, llm=llm, system_prompt=SYSTEM)
        # The conversation's history: handed to every run (a Context reused across
        # runs is serialized between them, and drops this memory on the way).
        self.memory: ChatMemoryBuffer | None = None if forget else ChatMemoryBuffer.from_defaults()

    def run_turn(self, user_input: str) -> str:
        """Answer one user message (the harness calls this once per turn)."""
        return self.loop.run_until_complete(self._turn(user_input))

    async def _turn(self, user_input: str) -> str:
        response = await self.agent.run(user_msg=user_input, memory=self.memory)
        return str(response).strip()

    def close(self) -> None:
        """End the conversation (the loop and its HTTP clients stay the thread's)."""


def make_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> LlamaIndexAgent:
    """The in-process factory: one agent per case."""
    return LlamaIndexAgent(base_url, api_key, workspace, mcp_url)


# --- Broken variants: each suite must fail, for the reason its bug gives. ---


def _with_text(result: types.CallToolResult, change: Callable[[str], str]) -> types.CallToolResult:
    """The result with each of its texts changed."""
    content = [
        block.model_copy(update={"text": change(block.text)})
        if isinstance(block, types.TextContent)
        else block
        for block in result.content
    ]
    return result.model_copy(update={"content": content})


class UpperCasingClient(BasicMCPClient):
    """Dispatches every string argument upper-cased."""

    async def call_tool(
        self, tool_name: str, arguments: dict | None = None, progress_callback: Any = None
    ) -> types.CallToolResult:
        upper = {
            key: value.upper() if isinstance(value, str) else value
            for key, value in (arguments or {}).items()
        }
        return await super().call_tool(tool_name, upper, progress_callback)


class LyingClient(BasicMCPClient):
    """Tells the model that a failed tool succeeded."""

    async def call_tool(
        self, tool_name: str, arguments: dict | None = None, progress_callback: Any = None
    ) -> types.CallToolResult:
        result = await super().call_tool(tool_name, arguments, progress_callback)
        if result.is_error:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text="ok, done")], is_error=False
            )
        return result


class LazyClient(BasicMCPClient):
    """Answers every call to ``echo`` itself, never dispatching it: it "knows" what
    echo returns, and makes that result up."""

    async def call_tool(
        self, tool_name: str, arguments: dict | None = None, progress_callback: Any = None
    ) -> types.CallToolResult:
        if tool_name != "echo":
            return await super().call_tool(tool_name, arguments, progress_callback)
        message = str((arguments or {}).get("message", ""))
        return types.CallToolResult(content=[types.TextContent(type="text", text=message)])


class PaddingClient(BasicMCPClient):
    """Appends a made-up note to every result."""

    async def call_tool(
        self, tool_name: str, arguments: dict | None = None, progress_callback: Any = None
    ) -> types.CallToolResult:
        result = await super().call_tool(tool_name, arguments, progress_callback)
        return _with_text(result, lambda text: text + " (cached fallback)")


class TruncatingClient(BasicMCPClient):
    """Keeps the first 16 characters of every result."""

    async def call_tool(
        self, tool_name: str, arguments: dict | None = None, progress_callback: Any = None
    ) -> types.CallToolResult:
        result = await super().call_tool(tool_name, arguments, progress_callback)
        return _with_text(result, lambda text: text[:16])


def _broken(client: type[BasicMCPClient]) -> Callable[..., LlamaIndexAgent]:
    def factory(
        *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
    ) -> LlamaIndexAgent:
        return LlamaIndexAgent(base_url, api_key, workspace, mcp_url, mcp_client=client)

    return factory


make_rewriting_agent = _broken(UpperCasingClient)
make_lying_agent = _broken(LyingClient)
make_lazy_agent = _broken(LazyClient)
make_padding_agent = _broken(PaddingClient)
make_truncating_agent = _broken(TruncatingClient)


def make_forgetful_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> LlamaIndexAgent:
    """Forgets the earlier turns: it hands the agent no memory, so each run starts a new one."""
    return LlamaIndexAgent(base_url, api_key, workspace, mcp_url, forget=True)
