"""The records made on every case are frozen dataclasses whose ``__init__`` writes
their fields directly: the same objects as the dataclass would make, made faster."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

import pytest

from zeroclaw_eval.case.admission import Case, Expectation
from zeroclaw_eval.grading.record import ModelRequest, RecordedCall, RequestUsage
from zeroclaw_eval.protocol import ModelReply, ToolCallRequest, ToolResult
from zeroclaw_eval.report.model import CaseReport, CheckResult
from zeroclaw_eval.util.frozen import quick_frozen, quick_init

QUICK = [
    Case,
    Expectation,
    ModelRequest,
    RecordedCall,
    RequestUsage,
    ModelReply,
    ToolCallRequest,
    ToolResult,
    CaseReport,
    CheckResult,
]


def every(name: str) -> type:
    """A class with every kind of field a quick class may have."""
    return type(
        name,
        (),
        {
            "__annotations__": {
                "a": "int",
                "b": "str",
                "c": "list[int]",
                "d": "dict[str, int] | None",
                "e": "tuple[int, ...]",
            },
            "b": "b",
            "c": field(default_factory=list),
            "d": None,
            "e": field(default=(1, 2)),
        },
    )


Quick: Any = quick_frozen(every("Quick"))
Plain: Any = dataclass(frozen=True)(every("Plain"))


def test_a_quick_class_takes_the_parameters_a_dataclass_would() -> None:
    def parameters(cls: type) -> list[tuple[str, Any]]:
        return [(p.name, repr(p.default)) for p in inspect.signature(cls).parameters.values()]

    assert parameters(Quick) == parameters(Plain)
    assert [name for name, _ in parameters(Quick)] == ["a", "b", "c", "d", "e"]


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((1, "x", [2], {"k": 3}, (4,)), {}), ((1,), {"d": {}, "c": [5]})],
    ids=["defaults", "positional", "keywords"],
)
def test_a_quick_object_is_the_object_the_dataclass_makes(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    quick, plain = Quick(*args, **kwargs), Plain(*args, **kwargs)
    assert dataclasses.asdict(quick) == dataclasses.asdict(plain)
    assert repr(quick).replace("Quick", "Plain") == repr(plain)
    assert quick == Quick(*args, **kwargs) and quick != Quick(2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.a = 2
    # A default factory makes a fresh value for each object.
    assert Quick(1).c is not Quick(1).c


def test_quick_takes_no_argument_it_would_not_take() -> None:
    with pytest.raises(TypeError):
        Quick()
    with pytest.raises(TypeError):
        Quick(1, bogus=2)


@pytest.mark.parametrize("cls", QUICK, ids=[cls.__name__ for cls in QUICK])
def test_the_records_take_their_fields_in_order_with_their_defaults(cls: type) -> None:
    fields = dataclasses.fields(cls)
    parameters = list(inspect.signature(cls).parameters.values())
    assert [p.name for p in parameters] == [f.name for f in fields]
    for parameter, each in zip(parameters, fields, strict=True):
        if each.default is not dataclasses.MISSING:
            assert parameter.default is each.default
        elif each.default_factory is not dataclasses.MISSING:
            assert repr(parameter.default) == "<factory>"
        else:
            assert parameter.default is inspect.Parameter.empty


def _post_init() -> type:
    class Post:
        x: int = 0

        def __post_init__(self) -> None: ...

    return dataclass(frozen=True, init=False)(Post)


def _kw_only() -> type:
    class KwOnly:
        x: int = field(default=0, kw_only=True)

    return dataclass(frozen=True, init=False)(KwOnly)


def _no_init_field() -> type:
    class NoInit:
        x: int = field(default=0, init=False)

    return dataclass(frozen=True, init=False)(NoInit)


def _slots() -> type:
    class Slots:
        x: int = 0

    return dataclass(frozen=True, init=False, slots=True)(Slots)


def _not_frozen() -> type:
    class Mutable:
        x: int = 0

    return dataclass(init=False)(Mutable)


def _with_init() -> type:
    class Init:
        x: int = 0

    return dataclass(frozen=True)(Init)


@pytest.mark.parametrize(
    "make",
    [_post_init, _kw_only, _no_init_field, _slots, _not_frozen, _with_init, lambda: every("E")],
    ids=["post-init", "kw-only", "no-init-field", "slots", "not-frozen", "init-made", "plain"],
)
def test_a_class_it_cannot_make_the_same_is_refused_when_made(make: Any) -> None:
    with pytest.raises(TypeError, match="quick_init takes a"):
        quick_init(make())
