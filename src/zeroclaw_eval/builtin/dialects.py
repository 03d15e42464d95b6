"""The built-in dialects: how the agent stacks of the conformance matrix talk to their model.

Each is declared data (:class:`~zeroclaw_eval.agents.dialect.Dialect`), registered
like a third-party plugin's, and chosen with ``[eval.agent] dialect``. The forms
are those the frameworks' pinned versions send (``examples/agents/<stack>/``
shows each on the wire); a stack that is not here gets its own from a plugin.
"""

from __future__ import annotations

from collections.abc import Callable

from zeroclaw_eval.agents.dialect import CHAT, Dialect
from zeroclaw_eval.hookspecs import hookimpl

#: What smolagents adds after an error of the agent's own tool, before the next step.
_SMOLAGENTS_RETRY = (
    "\nNow let's retry: take care not to repeat previous errors! If you have retried "
    "several times, try a completely different approach.\n"
)

SMOLAGENTS = Dialect(
    "smolagents",
    "smolagents' ToolCallingAgent: the results of one step in one user message, "
    "'Observation:' then each result stripped, in the order of the call ids; the "
    "answer through its own final_answer tool",
    results_in="user_message",
    block="Observation:\n{results}",
    # A failed own tool: the step ends before its calls are kept, so the error (the
    # arguments, the exception) ends the next user message, after whatever it holds.
    error_blocks=(
        "{any}Error:\nError executing tool '{name}' with arguments {result}\n"
        "Please try again or use another tool" + _SMOLAGENTS_RETRY,
    ),
    separator="\n",
    order_by_id=True,
    strip=True,
    answer_tool="final_answer",
    answer_argument="answer",
)

SMOLAGENTS_CODE = Dialect(
    "smolagents-code",
    "smolagents' CodeAgent: the model writes Python that calls the tools, so no tool "
    "call crosses the model's side; serve the tools to see them",
    results_in="user_message",
    block="Observation:\n{results}",
    model_calls=False,
)

PYDANTIC_AI = Dialect(
    "pydantic-ai",
    'pydantic-ai: each result in a role "tool" message; a failed tool\'s text as '
    '{"error": ...} (MCPToolset with tool_error_behavior="failed")',
    error=('{"error":{result|json}}',),
)


AG2 = Dialect(
    "ag2",
    "AG2's ConversableAgent with autogen.mcp.create_toolkit: each result in a role "
    "\"tool\" message; an MCP tool's result as str() of the toolkit's (text, None) tuple, "
    "an MCP error as 'Error: Tool call failed: <text>'",
    success=("({result|repr}, None)",),
    error=("Error: Tool call failed: {result}",),
)

#: How the mcp SDK (2.x) writes a CallToolResult of one text block, str() of it.
_MCP_CALL_TOOL_RESULT = (
    "meta=None content=[TextContent(type='text', text={result|repr}, annotations=None, "
    "meta=None)] structured_content=None is_error=%s result_type='complete'"
)

LLAMAINDEX = Dialect(
    "llamaindex",
    "LlamaIndex's agent workflow with llama-index-tools-mcp: each result in a role "
    "\"tool\" message; an MCP tool's result as str() of the mcp SDK's CallToolResult, "
    "an MCP error the same with is_error=True",
    success=(_MCP_CALL_TOOL_RESULT % "False",),
    error=(_MCP_CALL_TOOL_RESULT % "True",),
)


#: The AI SDK's MCP client hands the model an MCP result's content blocks; its Chat
#: Completions providers send them as the blocks' JSON, and drop the isError flag.
_AI_SDK_MCP_TEXT = '[{"type":"text","text":{result|json}}]'

VERCEL_AI = Dialect(
    "vercel-ai",
    "the Vercel AI SDK (ai, @ai-sdk/openai-compatible or @ai-sdk/openai chat models) "
    'with @ai-sdk/mcp: each result in a role "tool" message; an MCP result, error or '
    'not, as the JSON of its content blocks, [{"type":"text","text":"..."}]',
    success=(_AI_SDK_MCP_TEXT,),
    error=(_AI_SDK_MCP_TEXT,),
)


GOOGLE_ADK = Dialect(
    "google-adk",
    'Google ADK\'s LlmAgent on LiteLlm: each result in a role "tool" message, as the JSON '
    "of ADK's function response: an MCP result as its CallToolResult, "
    '{"content": [...], "isError": false} (true for an error); a function tool\'s '
    'text as {"result": "..."}',
    success=(
        '{"content": [{"type": "text", "text": {result|json}}], "isError": false}',
        '{"result": {result|json}}',
    ),
    error=('{"content": [{"type": "text", "text": {result|json}}], "isError": true}',),
)


@hookimpl
def zeroclaw_eval_register_dialects(register: Callable[[Dialect], None]) -> None:
    for dialect in (
        CHAT,
        SMOLAGENTS,
        SMOLAGENTS_CODE,
        PYDANTIC_AI,
        AG2,
        VERCEL_AI,
        GOOGLE_ADK,
        LLAMAINDEX,
    ):
        register(dialect)
