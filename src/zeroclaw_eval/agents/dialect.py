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
call's); a block template has ``{results}``; an error block may hold ``{any}``,
any text (the task a framework repeats before the error, say), since it is only
read, never rendered. Anything else is literal, braces
included. Dialects are registered by plugins (``zeroclaw_eval_register_dialects``)
and chosen with ``[eval.agent] dialect``; the default, :data:`CHAT`, is the chat
completions way: a tool message per call holding the result as returned.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal, NamedTuple

#: A result's placeholders: the result as returned, as a JSON string, as a Python string.
_RESULT_SLOTS = ("{result}", "{result|json}", "{result|repr}")

#: Every placeholder a result's form may hold.
_SLOT = re.compile(r"\{(result(?:\|json|\|repr)?|call_id|name|any)\}")

#: Where a result's text goes.
ResultsIn = Literal["tool_message", "user_message"]


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
    not cover (``zeroclaw eval plugins`` lists those registered). A dialect that
    cannot hold (a form without its result, a block without ``{results}``...)
    raises :class:`ValueError` where it is declared.
    """

    name: str
    description: str = ""
    results_in: ResultsIn = "tool_message"
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
    framework's error text in ``{result}``, ``{any}`` for text that may vary), read back
    for an agent with its own tools."""
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
        where = f"dialect {self.name!r}"
        if self.results_in not in ("tool_message", "user_message"):
            raise ValueError(f'{where}: results_in must be "tool_message" or "user_message"')
        for template in (*self.success, *self.error, *self.error_blocks):
            if sum(template.count(slot) for slot in _RESULT_SLOTS) != 1:
                raise ValueError(f"{where}: the form {template!r} must show the result once")
        for template in (*self.success, *self.error):
            if "{any}" in template:  # a result's form is rendered whole, to compare
                raise ValueError(f"{where}: the form {template!r} may not hold {{any}}")
        if self.block.count("{results}") != 1 or _SLOT.search(self.block):
            raise ValueError(f"{where}: its block must hold {{results}} once, and no other slot")
        if (self.answer_tool is None) != (self.answer_argument is None):
            raise ValueError(f"{where}: give both answer_tool and answer_argument")

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

    def _ordered(self, calls: Sequence[Shown]) -> Sequence[Shown]:
        # A stable sort: calls that share an id keep the order they were asked in.
        return sorted(calls, key=lambda call: call.call_id) if self.order_by_id else calls

    def block_form(self, calls: Sequence[Shown]) -> str:
        """What an honest agent of this stack shows the model for the results of
        ``calls``, one step's, each in its first form: for a detail to quote."""
        forms = [self.forms(call)[0] for call in self._ordered(calls)]
        return self.block.replace("{results}", self.separator.join(forms))

    def shows_block(self, text: str, calls: Sequence[Shown]) -> bool:
        """Whether ``text`` (a message's whole text) shows the results of ``calls``, one
        step's, whole, in the dialect's order, each in one of its forms."""
        head, _, tail = self.block.partition("{results}")
        if len(text) < len(head) + len(tail) or not (text.startswith(head) and text.endswith(tail)):
            return False
        body = text[len(head) : len(text) - len(tail)]
        options = [self.forms(call) for call in self._ordered(calls)]
        separator = self.separator

        @cache
        def fits(index: int, at: int) -> bool:
            """Whether the results from ``index`` on fill ``body`` from ``at`` to its end."""
            if index == len(options):
                return at == len(body)
            if index:
                if not body.startswith(separator, at):
                    return False
                at += len(separator)
            return any(
                body.startswith(form, at) and fits(index + 1, at + len(form))
                for form in options[index]
            )

        return fits(0, 0)

    def read_result(self, text: str, call_id: str, name: str) -> str:
        """The result ``text`` shows for the call (its framing taken off), for an agent
        whose tools are its own; ``text`` as it is when no form fits."""
        # The form with the most framing first: a bare "{result}" fits any text.
        for template in sorted({*self.success, *self.error}, key=_framing, reverse=True):
            found = _read(template, text, {"call_id": call_id, "name": name})
            if found is not None:
                return found
        return text

    def read_block(self, text: str, call: tuple[str, str] | None) -> str:
        """What a flattened message shows of one step's results, its framing taken off
        (for an agent whose tools are its own): the results together, or, for a step
        of one call (``call``: its id and name; ``None`` for a step of several), the
        framework's error text. ``text`` as it is when no form fits."""
        templates = [self.block.replace("{results}", "{result}")]
        values = {}
        if call is not None:
            templates.extend(self.error_blocks)
            values = {"call_id": call[0], "name": call[1]}
        # The form with the most framing first, as for one result.
        for template in sorted(templates, key=_framing, reverse=True):
            found = _read(template, text, values)
            if found is not None:
                return found
        return text


#: The chat-completions way: a ``role: "tool"`` message per call, holding the result
#: as the tool returned it.
CHAT = Dialect(
    "chat",
    'each result in a role "tool" message tied to its call, as the tool returned it',
)


def _render(template: str, result: str, call_id: str, name: str) -> str:
    values = {
        "result": result,
        "result|json": json.dumps(result, ensure_ascii=False),
        "result|repr": repr(result),
        "call_id": call_id,
        "name": name,
    }
    return _SLOT.sub(lambda match: values[match.group(1)], template)


def _framing(template: str) -> int:
    """How much literal text a template holds around its placeholders."""
    return len(_SLOT.sub("", template))


def _read(template: str, text: str, values: Mapping[str, str]) -> str | None:
    """The result ``text`` holds where ``template`` has its one result slot, the call's
    own slots filled in from ``values``; ``None`` when ``text`` has not the form."""
    parts: list[str] = []
    position = 0
    for match in _SLOT.finditer(template):
        key = match.group(1)
        parts.append(re.escape(template[position : match.start()]))
        if key == "any":
            parts.append(".*?")
        else:
            parts.append(re.escape(values[key]) if key in values else "(?P<value>.*)")
        position = match.end()
    parts.append(re.escape(template[position:]))
    found = re.fullmatch("".join(parts), text, re.DOTALL)
    if found is None:
        return None
    value = found.group("value")
    if "{result}" in template:
        return value
    try:  # the literal, decoded: a JSON string, or a Python one
        decoded = json.loads(value) if "{result|json}" in template else ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return None
    return decoded if isinstance(decoded, str) else None
