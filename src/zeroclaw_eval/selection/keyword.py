"""``-k EXPR``: pytest's keyword expression grammar, parsed into a predicate.

The grammar is pytest's (``_pytest/mark/expression.py``), so an expression that
selects tests there reads the same here::

    expression: expr? EOF
    expr:       and_expr ('or' and_expr)*
    and_expr:   not_expr ('and' not_expr)*
    not_expr:   'not' not_expr | '(' expr ')' | ident
    ident:      (\\w|:|+|-|.|[|]|\\\\|/)+

An identifier is true when the matcher says so (for ``-k``: it is a
case-insensitive substring of a case's names). It is evaluated as a tree of
closures, never compiled to Python, so no expression can run code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Matcher = Callable[[str], bool]
"""Whether one identifier of the expression matches."""

_Node = Callable[[Matcher], bool]

_IDENT = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")
_KEYWORDS = ("or", "and", "not")


class ExpressionError(ValueError):
    """An expression that does not parse; the message says where and what was expected."""


@dataclass(frozen=True)
class _Token:
    kind: str  # "(", ")", "or", "and", "not", "identifier", "end of input"
    value: str
    column: int  # from 1, as pytest counts


def _tokens(text: str) -> Iterator[_Token]:
    position = 0
    while position < len(text):
        char = text[position]
        if char in " \t":
            position += 1
        elif char in "()":
            yield _Token(char, char, position + 1)
            position += 1
        else:
            match = _IDENT.match(text, position)
            if match is None:
                raise ExpressionError(f"at column {position + 1}: unexpected character {char!r}")
            value = match.group()
            yield _Token(value if value in _KEYWORDS else "identifier", value, position + 1)
            position = match.end()
    yield _Token("end of input", "", len(text) + 1)


_SHOWN = {"(": "left parenthesis", ")": "right parenthesis"}


class _Parser:
    def __init__(self, text: str) -> None:
        self._tokens = list(_tokens(text))
        self._at = 0

    @property
    def _current(self) -> _Token:
        return self._tokens[self._at]

    def _accept(self, kind: str) -> _Token | None:
        token = self._current
        if token.kind != kind:
            return None
        self._at += 1
        return token

    def _reject(self, *expected: str) -> ExpressionError:
        token = self._current
        wanted = " or ".join(_SHOWN.get(kind, kind) for kind in expected)
        got = _SHOWN.get(token.kind, token.kind)
        if token.kind in ("identifier", "or", "and", "not"):
            got = f"{got} {token.value!r}" if token.kind == "identifier" else f"{token.value!r}"
        return ExpressionError(f"at column {token.column}: expected {wanted}; got {got}")

    def expression(self) -> _Node:
        if self._accept("end of input"):
            return lambda matcher: False  # as in pytest; the CLI treats "" as no selection
        node = self._or()
        if not self._accept("end of input"):
            raise self._reject("end of input")
        return node

    def _or(self) -> _Node:
        terms = [self._and()]
        while self._accept("or"):
            terms.append(self._and())
        if len(terms) == 1:
            return terms[0]
        return lambda matcher: any(term(matcher) for term in terms)

    def _and(self) -> _Node:
        factors = [self._not()]
        while self._accept("and"):
            factors.append(self._not())
        if len(factors) == 1:
            return factors[0]
        return lambda matcher: all(factor(matcher) for factor in factors)

    def _not(self) -> _Node:
        if self._accept("not"):
            inner = self._not()
            return lambda matcher: not inner(matcher)
        if self._accept("("):
            node = self._or()
            if not self._accept(")"):
                raise self._reject(")")
            return node
        token = self._accept("identifier")
        if token is None:
            raise self._reject("not", "(", "identifier")
        name = token.value
        return lambda matcher: matcher(name)


@dataclass(frozen=True)
class Expression:
    """A parsed ``-k`` expression; :meth:`evaluate` applies it to one case's matcher."""

    text: str
    _root: _Node

    @classmethod
    def compile(cls, text: str) -> Expression:
        """Parse ``text``. Raises :class:`ExpressionError` saying at which column and why."""
        return cls(text, _Parser(text).expression())

    def evaluate(self, matcher: Matcher) -> bool:
        """Whether the expression is true when each identifier is ``matcher(identifier)``."""
        return self._root(matcher)


def substring_matcher(*names: str) -> Matcher:
    """pytest's ``-k`` matching: an identifier matches when it is a case-insensitive
    substring of any of ``names``."""
    lowered = [name.lower() for name in names]
    return lambda ident: any(ident.lower() in name for name in lowered)
