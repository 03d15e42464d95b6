"""An agent on Google's Agent Development Kit (ADK), with tools of its own or from an MCP server.

The agent is an ADK ``LlmAgent`` on ``LiteLlm`` (``openai/<model>``: Chat Completions
at the model bridge, through LiteLLM), run by a ``Runner`` on an
``InMemorySessionService``: one session per case, kept across its turns (the
session's events are the history). Its own tools are plain Python functions (ADK
wraps each in a ``FunctionTool``); served, its tools are an ``McpToolset`` on
streamable HTTP. Nothing here knows about zeroclaw-eval: pointed at a real
endpoint, it is a real agent.

In-process: ``make_agent(base_url=..., api_key=..., workspace=..., mcp_url=None)``
is the ``[eval.agent] factory``; ``mcp_url`` comes with ``tools = "served"``.

Cheap by design: ADK is async, so the process keeps one event loop, on a thread of
its own, and one ``AsyncOpenAI`` client for all the cases of the run (LiteLLM's
``client=``); each case takes ``client.with_options(api_key=...)``, and its turns
run with ``Runner.run_async`` on that loop (one loop for the process, not one per
worker thread: see ``_Runtime``). The MCP toolset's HTTP client shares the
process's one SSL context.

The broken variants (``make_rewriting_agent``...) put their bug where ADK lets an
application change a tool call or the history: ``before_tool_callback`` /
``after_tool_callback``, or the session.
"""

from __future__ import annotations

import os

# Nothing may leave loopback: LiteLLM fetches its model cost map from GitHub when
# imported, unless told to use its local copy; ADK's MCP client looks for Google
# credentials (google.auth.default, which may ask a cloud metadata server) to try
# mTLS on every HTTP server it connects to, unless client certificates are off;
# ADK traces with OpenTelemetry.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("GOOGLE_API_USE_CLIENT_CERTIFICATE", "false")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

import asyncio
import ssl
import threading
import uuid
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
import litellm  # noqa: F401  (imported here, once: LiteLlm would, on the event loop)
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from openai import AsyncOpenAI

if TYPE_CHECKING:
    from google.adk.tools.mcp_tool import McpToolset

T = TypeVar("T")

MODEL = os.environ.get("GOOGLE_ADK_AGENT_MODEL", "gpt-4o-mini")
INSTRUCTION = "You are a helpful assistant. Use the tools when they help."
APP = "zeroclaw_agent"
USER = "zeroclaw_user"

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


class _Runtime:
    """The process's one event loop, on a thread of its own, and its model clients.

    Every case runs its turns on this one loop (``run`` blocks the calling worker
    thread until its coroutine is done), not on a loop per worker thread: LiteLLM
    keeps ONE global logging worker, bound to the loop of the last call, and with
    a loop per thread it is rebound on every call while its task on the previous
    loop fails ("Queue ... is bound to a different event loop", tracebacks on
    stderr, its logging lost). One loop also means one ``AsyncOpenAI`` (its
    connections belong to the loop that opened them) for every case of the run.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._clients: dict[str, AsyncOpenAI] = {}

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=loop.run_forever, name="google-adk event loop", daemon=True
                ).start()
                self._loop = loop
            return self._loop

    def client(self, base_url: str) -> AsyncOpenAI:
        """The process's model client for ``base_url`` (the run's bridge: one per run)."""
        with self._lock:
            client = self._clients.get(base_url)
            if client is None:
                http_client = httpx.AsyncClient(verify=shared_ssl_context())
                client = AsyncOpenAI(base_url=base_url, api_key="-", http_client=http_client)
                self._clients[base_url] = client
            return client

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the process's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._running_loop()).result()


_runtime = _Runtime()


def own_tools(workspace: Path) -> list[Callable[..., Any]]:
    """The agent's own tools, plain functions ADK wraps; the notes live in ``workspace``."""

    def echo(message: str) -> str:
        """Echo back the given message.

        Args:
            message: The text to echo.
        """
        return message

    def add(a: int, b: int) -> str:
        """Add two whole numbers.

        Args:
            a: The first number.
            b: The second number.
        """
        return str(a + b)

    def city_lookup(city: str) -> str | dict[str, str]:
        """Look up a few facts about a city.

        Args:
            city: The city's name, e.g. Paris.
        """
        fact = CITIES.get(city)
        if fact is None:
            # ADK's way for a tool to fail: an exception would end the whole run.
            return {"status": "error", "error_message": f"no such city: {city}"}
        return fact

    def write_note(name: str, text: str) -> str:
        """Save a text note under a name.

        Args:
            name: The note's name.
            text: What the note says.
        """
        (workspace / f"{name}.txt").write_text(text, encoding="utf-8")
        return f"saved note {name}"

    def read_note(name: str) -> str | dict[str, str]:
        """Read a note saved earlier.

        Args:
            name: The note's name.
        """
        path = workspace / f"{name}.txt"
        if not path.is_file():
            return {"status": "error", "error_message": f"no such note: {name}"}
        return path.read_text(encoding="utf-8")

    return [echo, add, city_lookup, write_note, read_note]


def mcp_toolset(mcp_url: str) -> McpToolset:
    """ADK's MCP toolset on streamable HTTP, its HTTP client on the process's SSL context."""
    # Imported only where tools are served: ADK's MCP modules and the mcp SDK cost
    # about 1 s of CPU that a run with its own tools need not pay.
    from google.adk.tools.mcp_tool import McpToolset, StreamableHTTPConnectionParams

    def http_client(
        headers: dict[str, str] | None = None,
        timeout: httpx.Timeout | None = None,
        auth: httpx.Auth | None = None,
    ) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            headers=headers,
            timeout=timeout or httpx.Timeout(30.0, read=300.0),
            auth=auth,
            follow_redirects=True,
            verify=shared_ssl_context(),
        )

    return McpToolset(
        connection_params=StreamableHTTPConnectionParams(
            url=mcp_url, httpx_client_factory=http_client
        )
    )


class AdkAgent:
    """One conversation on ADK: its Runner and its session (the history), on the process's loop."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        workspace: Path,
        mcp_url: str | None = None,
        *,
        before_tool: Callable[..., Any] | None = None,
        after_tool: Callable[..., Any] | None = None,
        session_per_turn: bool = False,
    ) -> None:
        client = _runtime.client(base_url)
        model = LiteLlm(
            model=f"openai/{MODEL}",
            api_base=base_url,
            api_key=api_key,
            client=client.with_options(api_key=api_key),
        )
        self.toolset: McpToolset | None = None
        tools: list[Any]
        if mcp_url is None:
            tools = list(own_tools(workspace))
        else:
            self.toolset = mcp_toolset(mcp_url)
            tools = [self.toolset]
        agent = LlmAgent(
            name="assistant",
            model=model,
            instruction=INSTRUCTION,
            tools=tools,
            before_tool_callback=before_tool,
            after_tool_callback=after_tool,
        )
        self.sessions = InMemorySessionService()
        self.runner = Runner(agent=agent, app_name=APP, session_service=self.sessions)
        self.session_per_turn = session_per_turn
        self.session_id = self._new_session()

    def _new_session(self) -> str:
        session_id = uuid.uuid4().hex
        _runtime.run(
            self.sessions.create_session(app_name=APP, user_id=USER, session_id=session_id)
        )
        return session_id

    async def _turn(self, user_input: str) -> str:
        message = types.Content(role="user", parts=[types.Part(text=user_input)])
        answer = ""
        async for event in self.runner.run_async(
            user_id=USER, session_id=self.session_id, new_message=message
        ):
            if event.is_final_response() and event.content and event.content.parts:
                answer = "".join(part.text or "" for part in event.content.parts)
        return answer

    def run_turn(self, user_input: str) -> str:
        """Answer one user message (the harness calls this once per turn)."""
        if self.session_per_turn:
            self.session_id = self._new_session()
        return _runtime.run(self._turn(user_input)).strip()

    def close(self) -> None:
        """End the conversation: close the runner and the MCP session (the loop and the
        model client stay the process's)."""
        _runtime.run(self.runner.close())
        if self.toolset is not None:
            _runtime.run(self.toolset.close())


def make_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
) -> AdkAgent:
    """The in-process factory: one agent per case."""
    return AdkAgent(base_url, api_key, workspace, mcp_url)


# --- Broken variants: each suite must fail, for the reason its bug gives. ---


def _texts(response: dict[str, Any], change: Callable[[str], str]) -> dict[str, Any]:
    """The response with its text changed: an MCP result's text blocks, or a
    function tool's ``result``."""
    if isinstance(response.get("content"), list):
        content = [
            {**block, "text": change(block["text"])} if block.get("type") == "text" else block
            for block in response["content"]
        ]
        return {**response, "content": content}
    if isinstance(response.get("result"), str):
        return {**response, "result": change(response["result"])}
    return response


def upper_case_arguments(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
) -> dict[str, Any] | None:
    """Dispatches every string argument upper-cased (``before_tool_callback``)."""
    for key, value in args.items():
        if isinstance(value, str):
            args[key] = value.upper()
    return None


def report_success(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
) -> dict[str, Any] | None:
    """Tells the model that a failed tool succeeded (``after_tool_callback``)."""
    if not isinstance(tool_response, dict):
        return None
    if tool_response.get("isError"):
        return {"content": [{"type": "text", "text": "ok, done"}], "isError": False}
    if tool_response.get("status") == "error":
        return {"result": "ok, done"}
    return None


def answer_echo_itself(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
) -> dict[str, Any] | None:
    """Answers every call to ``echo`` itself, never dispatching it: it "knows" what echo
    returns, and makes that result up (a ``before_tool_callback`` that returns a response
    skips the tool)."""
    if tool.name != "echo":
        return None
    return {"result": str(args.get("message", ""))}


def pad_results(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
) -> dict[str, Any] | None:
    """Appends a made-up note to every result (``after_tool_callback``)."""
    if not isinstance(tool_response, dict):
        return None
    return _texts(tool_response, lambda text: text + " (cached fallback)")


def truncate_results(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
) -> dict[str, Any] | None:
    """Keeps the first 16 characters of every result (``after_tool_callback``)."""
    if not isinstance(tool_response, dict):
        return None
    return _texts(tool_response, lambda text: text[:16])


def _broken(**bug: Any) -> Callable[..., AdkAgent]:
    def factory(
        *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
    ) -> AdkAgent:
        return AdkAgent(base_url, api_key, workspace, mcp_url, **bug)

    return factory


make_rewriting_agent = _broken(before_tool=upper_case_arguments)
make_lying_agent = _broken(after_tool=report_success)
make_lazy_agent = _broken(before_tool=answer_echo_itself)
make_padding_agent = _broken(after_tool=pad_results)
make_truncating_agent = _broken(after_tool=truncate_results)
# Forgets the earlier turns: a new session (ADK's history) for every turn.
make_forgetful_agent = _broken(session_per_turn=True)
