"""A smolagents ``CodeAgent`` under test, with its own tools or served the case's.

The model writes Python (in ``<code>`` blocks) that calls the tools as functions, and
smolagents' local executor runs it; the code ends a task by calling
``final_answer(...)``, whose argument is the turn's answer. ``make_agent`` is the
``[eval.agent] factory``: one agent per case attempt, on the same model, tools, MCP
connection (smolagents' ``MCPClient``) and memory across turns
(``agent.run(task, reset=False)``) as the ToolCallingAgent stack beside it, whose
``smolstack.py`` both stacks share.

The other factories are the broken variants, each bug in an extension point of the
framework (``smolstack.py`` says where).
"""

from __future__ import annotations

import sys
from pathlib import Path

# What both smolagents stacks share lives beside the ToolCallingAgent's.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "smolagents_tools"))

from smolagents import CodeAgent
from smolstack import (
    answer_echo_itself,
    factory,
    pad_result,
    report_success,
    rewrite_arguments,
    truncate_result,
)

make_agent = factory(CodeAgent)

# The broken variants: each must fail its suite for its own reason (matrix.toml).
make_rewriting_agent = factory(CodeAgent, hook=rewrite_arguments)
make_lying_agent = factory(CodeAgent, hook=report_success)
make_lazy_agent = factory(CodeAgent, hook=answer_echo_itself)
make_padding_agent = factory(CodeAgent, hook=pad_result)
make_truncating_agent = factory(CodeAgent, hook=truncate_result)
make_forgetful_agent = factory(CodeAgent, remember=False)
