"""What both smolagents stacks share: the tools, the model, the MCP connection, the turn loop.

The ``ToolCallingAgent`` stack (``agent.py`` beside this file) and the ``CodeAgent``
stack (``../smolagents_code/agent.py``) are the same agent on two of smolagents'
agent classes: the same own tools, the same ``OpenAIServerModel`` on one shared
OpenAI client, the same ``MCPClient`` for the served tools, the same way of keeping
the conversation across turns (``agent.run(task, reset=False)``). Nothing here knows
about zeroclaw-eval: pointed at a real model and a real MCP server, it is a real agent.

The broken variants put each bug in smolagents' or mcpadapt's own extension points:
an mcpadapt ``ToolAdapter`` (the hook every MCP tool call goes through, where the
``CallToolResult`` and its ``isError`` flag are still in hand) for the served tools,
and the framework's own ``reset`` of its memory for the forgetful one.
"""

from __future__ import annotations

import os

# No network outside loopback exists here: nothing of the stack may phone home.
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import re
import ssl
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Protocol

import httpx
import mcp.types
import openai
from mcpadapt.core import MCPAdapt
from mcpadapt.smolagents_adapter import SmolAgentsAdapter
from smolagents import MCPClient, MultiStepAgent, OpenAIServerModel, Tool, tool
from smolagents.monitoring import LogLevel

#: The model name the agent asks for; the bridge answers whatever it is called.
MODEL = os.environ.get("SMOLAGENTS_MODEL", "gpt-4o-mini")

#: How many model steps one task may take before smolagents gives up.
MAX_STEPS = 10

# ---------------------------------------------------------------------------------
# The agent's own tools: smolagents @tool functions, and Tool classes for the two
# that need the case's workspace.


@tool
def echo(message: str) -> str:
    """Return the message unchanged.

    Args:
        message: The text to echo back.
    """
    return message


@tool
def add(a: int, b: int) -> str:
    """Add two integers and return the sum as text.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return str(a + b)


#: What city_lookup knows: longer than 40 characters each, so that a cut result shows.
CITIES = {
    "Paris": "Paris, France: population 2,102,650 (2023); mayor Anne Hidalgo",
    "Tokyo": "Tokyo, Japan: population 14,192,184 (2024); governor Yuriko Koike",
    "Lagos": "Lagos, Nigeria: population 15,388,000 (2023 estimate); governor Babajide Sanwo-Olu",
    "Lima": "Lima, Peru: population 10,151,200 (2023); mayor Renzo Reggiardo",
}


@tool
def city_lookup(city: str) -> str:
    """Look up a few facts about a city: its country, population and mayor.

    Args:
        city: The city's name, e.g. Paris.
    """
    if city not in CITIES:
        # smolagents' way for a tool to fail: raise; the agent shows the model the error.
        raise ValueError(f"no such city: {city}")
    return CITIES[city]


#: A note's name: a plain file name, never a path out of the workspace.
NOTE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class _NoteTool(Tool):
    """A tool that keeps notes as files in one directory (the case's workspace)."""

    def __init__(self, workspace: Path) -> None:
        super().__init__()
        self.workspace = workspace

    def _path(self, name: str) -> Path:
        if not NOTE_NAME.fullmatch(name):
            raise ValueError(f"bad note name: {name!r} (letters, digits, _ and - only)")
        return self.workspace / f"{name}.txt"


class WriteNote(_NoteTool):
    name = "write_note"
    description = "Save a short text note under a name, replacing any note of that name."
    inputs: ClassVar[dict[str, dict[str, str]]] = {
        "name": {"type": "string", "description": "The note's name, e.g. groceries."},
        "text": {"type": "string", "description": "What the note says."},
    }
    output_type = "string"

    def forward(self, name: str, text: str) -> str:
        self._path(name).write_text(text, encoding="utf-8")
        return f"saved note {name}"


class ReadNote(_NoteTool):
    name = "read_note"
    description = "Read back the note saved under a name."
    inputs: ClassVar[dict[str, dict[str, str]]] = {
        "name": {"type": "string", "description": "The note's name."}
    }
    output_type = "string"

    def forward(self, name: str) -> str:
        path = self._path(name)
        if not path.is_file():
            raise ValueError(f"no note named {name}")
        return path.read_text(encoding="utf-8")


def own_tools(workspace: Path) -> list[Tool]:
    """The agent's own tools, the notes kept in ``workspace``."""
    return [echo, add, city_lookup, WriteNote(workspace), ReadNote(workspace)]


# ---------------------------------------------------------------------------------
# The model: one OpenAI client per process, its connection pool shared by every
# case; each case's model gets a copy with its own key (with_options costs 0.1 ms,
# a fresh client builds an SSL context, 30-45 ms of CPU).

_clients: dict[str, openai.OpenAI] = {}
_clients_lock = threading.Lock()


def model(base_url: str, api_key: str) -> OpenAIServerModel:
    """smolagents' OpenAI-compatible model on the shared client, with ``api_key``."""
    with _clients_lock:
        shared = _clients.get(base_url)
        if shared is None:
            # max_retries=0: a refused request fails the step at once, never waits.
            shared = _clients[base_url] = openai.OpenAI(
                base_url=base_url, api_key="unset", max_retries=0
            )
    return OpenAIServerModel(model_id=MODEL, client=shared.with_options(api_key=api_key))


# ---------------------------------------------------------------------------------
# The served tools: smolagents' MCPClient (mcpadapt) over streamable HTTP.

_ssl_context: ssl.SSLContext | None = None
_ssl_lock = threading.Lock()


def _mcp_http_client(
    headers: dict[str, str] | None = None,
    timeout: httpx.Timeout | None = None,
    auth: httpx.Auth | None = None,
) -> httpx.AsyncClient:
    """The mcp SDK's HTTP client, on one SSL context for the process.

    Each connection runs on mcpadapt's own event loop, so an ``AsyncClient`` cannot be
    shared between cases; the SSL context it would build (and load the CA bundle
    into) each time can.
    """
    global _ssl_context
    with _ssl_lock:
        if _ssl_context is None:
            _ssl_context = ssl.create_default_context()
    return httpx.AsyncClient(
        headers=headers,
        timeout=timeout or httpx.Timeout(30.0, read=300.0),
        auth=auth,
        verify=_ssl_context,
    )


def _server(mcp_url: str) -> dict[str, Any]:
    return {
        "url": mcp_url,
        "transport": "streamable-http",
        "httpx_client_factory": _mcp_http_client,
    }


class Connection(Protocol):
    """An open MCP connection: its tools, and how to close it."""

    tools: list[Tool]

    def close(self) -> None: ...


class ClientConnection:
    """The served tools through smolagents' ``MCPClient``, as its docs show it."""

    def __init__(self, mcp_url: str) -> None:
        # structured_output=False: a tool's text result is the observation as it came.
        self._client = MCPClient(_server(mcp_url), structured_output=False)
        self.tools: list[Tool] = self._client.get_tools()

    def close(self) -> None:
        self._client.disconnect()


CallTool = Callable[[dict[str, Any] | None], mcp.types.CallToolResult]


class AdaptedConnection:
    """The served tools through mcpadapt with an adapter of the team's own (``MCPClient``
    is ``MCPAdapt`` with the stock ``SmolAgentsAdapter``): where a team hooks every MCP
    call, with the ``CallToolResult`` in hand."""

    def __init__(self, mcp_url: str, adapter: SmolAgentsAdapter) -> None:
        self._adapt = MCPAdapt(_server(mcp_url), adapter)
        self._adapt.start()
        try:
            self.tools: list[Tool] = self._adapt.tools()
        except BaseException:
            self._adapt.close()
            raise

    def close(self) -> None:
        self._adapt.close()


class HookedAdapter(SmolAgentsAdapter):
    """mcpadapt's smolagents adapter, each MCP call going through ``hook(name, call,
    arguments)`` (``call`` runs the tool on the server)."""

    def __init__(self, hook: Hook) -> None:
        super().__init__(structured_output=False)
        self._hook = hook

    def adapt(self, func: CallTool, mcp_tool: mcp.types.Tool) -> Tool:
        def hooked(arguments: dict[str, Any] | None) -> mcp.types.CallToolResult:
            return self._hook(mcp_tool.name, func, dict(arguments or {}))

        return super().adapt(hooked, mcp_tool)


# ---------------------------------------------------------------------------------
# The broken variants' bugs, each an mcpadapt hook: (tool name, the call to the
# server, the arguments) -> the CallToolResult the agent goes on with.

Hook = Callable[[str, CallTool, dict[str, Any]], mcp.types.CallToolResult]


def _text(text: str) -> mcp.types.CallToolResult:
    return mcp.types.CallToolResult(content=[mcp.types.TextContent(type="text", text=text)])


def _edited(
    result: mcp.types.CallToolResult, edit: Callable[[str], str]
) -> mcp.types.CallToolResult:
    content = [
        item.model_copy(update={"text": edit(item.text)})
        if isinstance(item, mcp.types.TextContent)
        else item
        for item in result.content
    ]
    return result.model_copy(update={"content": content})


def rewrite_arguments(
    name: str, call: CallTool, arguments: dict[str, Any]
) -> mcp.types.CallToolResult:
    """Upper-cases every string argument before dispatching it."""
    return call({key: v.upper() if isinstance(v, str) else v for key, v in arguments.items()})


def report_success(
    name: str, call: CallTool, arguments: dict[str, Any]
) -> mcp.types.CallToolResult:
    """Shows the model a failed tool as a success."""
    result = call(arguments)
    return _text("ok, done") if result.isError else result


def answer_echo_itself(
    name: str, call: CallTool, arguments: dict[str, Any]
) -> mcp.types.CallToolResult:
    """Answers ``echo`` without dispatching it: "it only returns its argument"."""
    if name == "echo":
        return _text(str(arguments.get("message", "")))
    return call(arguments)


def pad_result(name: str, call: CallTool, arguments: dict[str, Any]) -> mcp.types.CallToolResult:
    """Appends invented text to every real result."""
    return _edited(call(arguments), lambda text: text + " (cached fallback)")


def truncate_result(
    name: str, call: CallTool, arguments: dict[str, Any]
) -> mcp.types.CallToolResult:
    """Cuts every result after its first 16 characters."""
    return _edited(call(arguments), lambda text: text[:16])


# ---------------------------------------------------------------------------------
# The agent under test: one smolagents agent for one conversation.


class Conversation:
    """One case's agent: ``run_turn`` runs a task, keeping smolagents' memory of the
    earlier ones (``reset=False``), and ``close`` lets the MCP connection go."""

    def __init__(
        self, agent: MultiStepAgent, connection: Connection | None, *, remember: bool = True
    ) -> None:
        self.agent = agent
        self.connection = connection
        self.remember = remember

    def run_turn(self, user_input: str) -> str:
        return str(self.agent.run(user_input, reset=not self.remember))

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()


#: Builds the smolagents agent of a stack from its tools and model.
AgentClass = Callable[..., MultiStepAgent]

#: Each agent class's prompt templates, kept from its first agent: smolagents parses
#: their YAML file (15 ms of CPU) for every agent not handed them, and only reads them.
_templates: dict[AgentClass, Any] = {}

#: What the harness calls: ``make_agent(*, base_url, api_key, workspace, mcp_url=None)``.
Factory = Callable[..., Conversation]


def factory(agent_class: AgentClass, *, hook: Hook | None = None, remember: bool = True) -> Factory:
    """The ``[eval.agent] factory`` of a stack on ``agent_class``: with its own tools, or
    served the case's (``mcp_url``) through ``MCPClient``, or, given a ``hook``, through
    mcpadapt with every MCP call going through it; ``remember=False`` resets smolagents'
    memory at each turn."""

    def make_agent(
        *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
    ) -> Conversation:
        connection: Connection | None = None
        if mcp_url is None:
            if hook is not None:
                raise ValueError("this agent's bug sits in its MCP client: serve it its tools")
            tools = own_tools(workspace)
        elif hook is None:
            connection = ClientConnection(mcp_url)
        else:
            connection = AdaptedConnection(mcp_url, HookedAdapter(hook))
        if connection is not None:
            tools = connection.tools
        try:
            templates = _templates.get(agent_class)
            agent = agent_class(
                tools=tools,
                model=model(base_url, api_key),
                prompt_templates=templates,
                max_steps=MAX_STEPS,
                verbosity_level=LogLevel.OFF,
            )
            if templates is None:
                _templates.setdefault(agent_class, agent.prompt_templates)
        except BaseException:
            if connection is not None:
                connection.close()
            raise
        return Conversation(agent, connection, remember=remember)

    return make_agent
