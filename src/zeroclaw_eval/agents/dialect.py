"""How an agent stack talks to its model: declared data, one :class:`Dialect` per stack.

The harness reads a bridged agent's tool calls and results from what it sends the
model. Stacks differ in how they do it, and none of it may be guessed:

- **where a result goes**: most send each in a ``role: "tool"`` message tied to its
  call by ``tool_call_id`` (``results_in = "tool_message"``); some flatten the
  results of one model step into the text of one message, smolagents into a
  ``user`` message ``Observation:\\n...`` (``results_in = "user_message"``, with
  ``block``, ``separator``, ``order_by_id`` and ``strip`` saying how);
- **what an honest framework adds around a result**: pydantic-ai sends a failed
  tool's text as ``{"error":"..."}``, LangGraph as ``Error: ToolException('...')``
  with a plea to fix the mistakes. ``success`` and ``error`` are the templates a
  result is shown with, for a call that succeeded and one that failed; a result is
  compared whole, so an agent that appends to it, cuts it, or sends a success in
  place of an error is caught, and an honest framework's own framing is not;
- **how the answer is given**: plain text, or through a tool of the agent's own
  (``answer_tool``, ``answer_argument``: smolagents' ``final_answer(answer=...)``),
  which is the turn's answer, not a tool call;
- **whether the model asks for tools at all**: an agent whose model writes code
  that calls the tools (``model_calls = False``) shows no tool call on the wire; its
  calls are seen only when its tools are served over MCP.

Templates are text with placeholders: ``{result}`` (the result as the tool
returned it), ``{result|json}`` (as a JSON string literal, non-ASCII kept),
``{result|repr}`` (as a Python string literal), ``{call_id}`` and ``{name}`` (the
call's); a block template has ``{results}``. Anything else is literal, braces
included. Dialects are registered by plugins (``zeroclaw_eval_register_dialects``)
and chosen with ``[eval.agent] dialect``; the default, :data:`CHAT`, is the chat
completions way: a tool message per call holding the result as returned.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

#: The placeholders a template may hold.
_SLOT = re.compile(r"\{(result(?:\|json|\|repr)?|results|call_id|name)\}")

#: How a JSON string literal and a Python one look, for reading a result back.
_LITERALS = {
    "result|json": r'"(?:[^"\\]|\\.)*"',
    "result|repr": r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"",
}

#: More ways of showing one step's results than a check tries; past it, the block
#: is compared with each result in its first form only.
MAX_BLOCK_FORMS = 256


class Shown(NamedTuple):
    """One call's result as the tool returned it, for rendering what the model should see."""

    call_id: str
    name: str
    result: str
    succeeded: bool


@dataclass(frozen=True)
class Dialect:
    """How one agent stack talks to its model (see the module's docstring).

    Every field is data; register one from a plugin for a stack the built-ins do
    not cover (``zeroclaw eval plugins`` lists those registered).
    """

    name: str
    description: str = ""
    results_in: Literal["tool_message", "user_message"] = "tool_message"
    """Where the agent shows the model a tool's result: a ``role: "tool"`` message per
    call, or (flattened) one ``user`` message holding the results of one model step."""
    success: tuple[str, ...] = ("{result}",)
    """The forms a successful result is shown in (any one of them)."""
    error: tuple[str, ...] = ("{result}",)
    """The forms a failed result is shown in (the tool's own error flag, over MCP)."""
    block: str = "{results}"
    """``user_message`` only: how one step's results are shown together."""
    error_blocks: tuple[str, ...] = ()
    """``user_message`` only: the forms of a step the agent's own tool failed in (the
    framework's error text in ``{result}``), read back for an agent with its own tools."""
    separator: str = "\n"
    """``user_message`` only: what joins the results of one step."""
    order_by_id: bool = False
    """``user_message`` only: the results are joined in the order of their call ids
    (else in the order the model asked for the calls)."""
    strip: bool = False
    """Whether the framework strips the whitespace around a result before showing it."""
    answer_tool: str | None = None
    """A tool of the agent's own whose call gives the turn's answer (never a tool call
    of the case)."""
    answer_argument: str | None = None
    """The argument of ``answer_tool`` holding the answer."""
    model_calls: bool = True
    """Whether the model asks for tools with tool calls; false for an agent whose model
    writes code that calls them."""

    def __post_init__(self) -> None:
        for template in (*self.success, *self.error):
            if "{results}" in template:
                raise ValueError(f"dialect {self.name!r}: a result's form has no {{results}}")
        if self.results_in == "user_message" and "{results}" not in self.block:
            raise ValueError(f"dialect {self.name!r}: its block must hold {{results}}")
        if (self.answer_tool is None) != (self.answer_argument is None):
            raise ValueError(f"dialect {self.name!r}: give both answer_tool and answer_argument")

    @property
    def flattens(self) -> bool:
        """Whether the results of one step reach the model in one message's text."""
        return self.results_in == "user_message"

    def forms(self, call: Shown) -> list[str]:
        """Every text an honest agent of this stack may show the model for ``call``."""
        result = call.result.strip() if self.strip else call.result
        templates = self.success if call.succeeded else self.error
        return list(dict.fromkeys(_render(t, result, call.call_id, call.name) for t in templates))

    def shows(self, text: str, call: Shown) -> bool:
        """Whether ``text`` (a tool message's content) shows ``call``'s result whole."""
        return text in self.forms(call)

    def block_forms(self, calls: Sequence[Shown]) -> list[str]:
        """Every text an honest agent of this stack may show the model for the results of
        ``calls``, one step's, together (a flattening dialect), in the dialect's order."""
        ordered = sorted(calls, key=lambda call: call.call_id) if self.order_by_id else calls
        options = [self.forms(call) for call in ordered]
        combinations = 1
        for forms in options:
            combinations *= len(forms)
        if combinations > MAX_BLOCK_FORMS:
            options = [forms[:1] for forms in options]
        return [
            _render(self.block, "", "", "", results=self.separator.join(chosen))
            for chosen in itertools.product(*options)
        ]

    def shows_block(self, text: str, calls: Sequence[Shown]) -> bool:
        """Whether ``text`` (a message's whole text) shows the results of ``calls``, one
        step's, whole and in the dialect's order."""
        return text in self.block_forms(calls)

    def read_result(self, text: str, call_id: str, name: str) -> str:
        """The result ``text`` shows for the call (its framing taken off), for an agent
        whose tools are its own; ``text`` as it is when no form fits."""
        # The form with the most framing first: a bare "{result}" fits any text.
        for template in sorted({*self.success, *self.error}, key=_framing, reverse=True):
            found = _read(template, text, call_id, name)
            if found is not None:
                return found
        return text

    def read_block(self, text: str, call: tuple[str, str] | None) -> str:
        """What a flattened message shows of one step's results, its framing taken off
        (for an agent whose tools are its own): the results together, or, for a step
        of one call (``call``: its id and name; ``None`` for a step of several), the
        framework's error text. ``text`` as it is when no form fits."""
        templates = [self.block.replace("{results}", "{result}")]
        if call is not None:
            templates.extend(self.error_blocks)
        call_id, name = call if call is not None else ("", "")
        for template in templates:
            found = _read(template, text, call_id, name)
            if found is not None:
                return found
        return text


#: The chat-completions way: a ``role: "tool"`` message per call, holding the result
#: as the tool returned it.
CHAT = Dialect(
    "chat",
    'each result in a role "tool" message tied to its call, as the tool returned it',
)


def _render(template: str, result: str, call_id: str, name: str, *, results: str = "") -> str:
    values = {
        "result": result,
        "result|json": json.dumps(result, ensure_ascii=False),
        "result|repr": repr(result),
        "results": results,
        "call_id": call_id,
        "name": name,
    }
    return _SLOT.sub(lambda match: values[match.group(1)], template)


def _framing(template: str) -> int:
    """How much literal text a template holds around its placeholders."""
    return len(_SLOT.sub("", template))


def _read(template: str, text: str, call_id: str, name: str) -> str | None:
    """The result ``text`` holds where ``template`` has its ``{result}`` slot, or
    ``None`` when ``text`` does not have the template's form."""
    parts: list[str] = []
    slot: str | None = None
    position = 0
    for match in _SLOT.finditer(template):
        parts.append(re.escape(template[position : match.start()]))
        key = match.group(1)
        if key.startswith("result") and key != "results" and slot is None:
            slot = key
            parts.append(f"(?P<value>{_LITERALS.get(key, '.*')})")
        else:
            parts.append(re.escape(_render(match.group(0), "", call_id, name)))
        position = match.end()
    parts.append(re.escape(template[position:]))
    if slot is None:
        return None
    found = re.fullmatch("".join(parts), text, re.DOTALL)
    if found is None:
        return None
    value = found.group("value")
    try:
        if slot == "result|json":
            decoded = json.loads(value)
        elif slot == "result|repr":
            decoded = ast.literal_eval(value)
        else:
            return value
    except (ValueError, SyntaxError):
        return None
    return decoded if isinstance(decoded, str) else None
