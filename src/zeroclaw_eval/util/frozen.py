"""Frozen dataclasses that are cheap to make, for the records made on every case.

A frozen dataclass's generated ``__init__`` sets each field with
``object.__setattr__(self, name, value)``: a global lookup, an attribute lookup
and a call per field, three to four times the cost of a plain assignment. The
records a replay makes for every request, reply, call and check (a dozen fields
each, several per case) spend more of a plain replay's time there than in the
loop itself. A class made with :func:`quick_frozen` instead of
``@dataclass(frozen=True)`` is that dataclass with the ``__init__`` it would have
had (the same parameters and defaults), writing the fields into the instance's
``__dict__``: the object is the same (frozen afterwards, equal, hashed and shown
as the dataclass says), only made faster.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, TypeVar

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pydantic's own dependency
    from typing_extensions import dataclass_transform

T = TypeVar("T")


class _Factory:
    """Marks a parameter left to its field's default factory (shown as dataclasses
    show it)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


@dataclass_transform(frozen_default=True)
def quick_frozen(cls: type[T]) -> type[T]:
    """``@dataclass(frozen=True)``, made by :func:`quick_init`."""
    return quick_init(dataclasses.dataclass(frozen=True, init=False)(cls))


def quick_init(cls: type[T]) -> type[T]:
    """Give the frozen dataclass ``cls`` (made with ``init=False``, so that no
    ``__init__`` is made twice) an ``__init__`` that stores its fields directly;
    returns ``cls``.

    Only a plain frozen dataclass qualifies: every field set by ``__init__``, none
    keyword-only, no ``__post_init__`` and no ``__slots__`` (the fields must live in
    ``__dict__``). Anything else raises :class:`TypeError` when the class is made,
    never a wrong object later.
    """
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or params.init:
        raise TypeError(f"{cls.__name__}: quick_init takes a dataclass(frozen=True, init=False)")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if (
        hasattr(cls, "__post_init__")
        or "__slots__" in cls.__dict__
        or any(not field.init or field.kw_only for field in fields)
    ):
        raise TypeError(
            f"{cls.__name__}: quick_init takes a plain frozen dataclass (every field "
            "in __init__, none keyword-only, no __post_init__, no __slots__)"
        )
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY}
    arguments = []
    body = []
    for field in fields:
        name = field.name
        if field.default is not dataclasses.MISSING:
            namespace[f"_default_{name}"] = field.default
            arguments.append(f"{name}=_default_{name}")
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{name}"] = field.default_factory
            arguments.append(f"{name}=_FACTORY")
            body.append(f"    if {name} is _FACTORY:\n        {name} = _factory_{name}()")
        else:
            arguments.append(name)
    body.append("    stored = self.__dict__")
    body.extend(f"    stored[{field.name!r}] = {field.name}" for field in fields)
    source = f"def __init__(self, {', '.join(arguments)}):\n" + "\n".join(body)
    exec(source, namespace)  # as dataclasses makes the __init__ it replaces
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
