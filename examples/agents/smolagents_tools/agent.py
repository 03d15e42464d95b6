"""A smolagents ``ToolCallingAgent`` under test, with its own tools or served the case's.

``make_agent`` is the ``[eval.agent] factory``: one agent per case attempt, its
model smolagents' ``OpenAIServerModel`` on one OpenAI client shared by the process,
its tools its own (``echo``, ``add``, ``city_lookup``, ``write_note``, ``read_note``)
or, when the harness passes ``mcp_url``, the case's through smolagents' ``MCPClient``
over streamable HTTP. Each turn is ``agent.run(task, reset=False)``: smolagents keeps
the conversation in its own memory. The model answers through smolagents' own
``final_answer`` tool.

The other factories are the broken variants, each bug in an extension point of the
framework (``smolstack.py`` says where).
"""

from __future__ import annotations

from smolagents import ToolCallingAgent
from smolstack import (
    answer_echo_itself,
    factory,
    pad_result,
    report_success,
    rewrite_arguments,
    truncate_result,
)

make_agent = factory(ToolCallingAgent)

# The broken variants: each must fail its suite for its own reason (matrix.toml).
make_rewriting_agent = factory(ToolCallingAgent, hook=rewrite_arguments)
make_lying_agent = factory(ToolCallingAgent, hook=report_success)
make_lazy_agent = factory(ToolCallingAgent, hook=answer_echo_itself)
make_padding_agent = factory(ToolCallingAgent, hook=pad_result)
make_truncating_agent = factory(ToolCallingAgent, hook=truncate_result)
make_forgetful_agent = factory(ToolCallingAgent, remember=False)
