"""Admission: a fixture file becomes a :class:`Case`, or is refused with file and field.

Loading fails closed, because a mandatory gate must never certify a case that
cannot fail. In order: the bytes must be UTF-8 strict JSON (no duplicate keys, no
non-finite numbers); the trace must match the strict models (no unknown keys, no
coercion); every ``expects`` key must name a registered family whose parameters
pass that family's validation, the empty-string rule and its own rules; the whole
must produce at least one check; and the run mode may add rules (replay needs
steps). The first problem found is reported as one line:
``<file>: <field>=<value>: <what is wrong>``; when the strict models find
several at once (a typo'd key and the required key it misspells), every one
of them is kept (:attr:`AdmissionError.lines`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from zeroclaw_eval.case.faults import admit_faults
from zeroclaw_eval.case.fixture import SCHEMA_KEY, LlmTrace
from zeroclaw_eval.errors import AdmissionError
from zeroclaw_eval.grading.family import EVIDENCE, Family, Problem
from zeroclaw_eval.grading.record import RunRecord, empty_run
from zeroclaw_eval.modes.base import RunMode
from zeroclaw_eval.plugins.registry import Registry
from zeroclaw_eval.report.model import CheckResult, plural
from zeroclaw_eval.util import strictjson
from zeroclaw_eval.util.frozen import quick_frozen
from zeroclaw_eval.util.wording import (
    MISSING,
    describe,
    did_you_mean,
    dotted,
    kind_of,
    model_keys,
    shown,
)

if TYPE_CHECKING:
    from zeroclaw_eval.agents.base import AgentUnderTest

Path_ = tuple[str | int, ...]

#: The largest fixture file admitted. A fixture is hand-written JSON; one this big
#: is a mistake (a committed log dump), and reading it whole would cost gigabytes.
MAX_FIXTURE_BYTES = 64 * 1024 * 1024


@quick_frozen
class Expectation:
    """One admitted ``expects`` entry: the family, its validated parameters, its plugin."""

    family: Family[Any]
    params: Any
    plugin: str

    @property
    def name(self) -> str:
        return self.family.name


@quick_frozen
class Case:
    """An admitted fixture: safe to run and to grade."""

    source: str
    trace: LlmTrace
    expectations: tuple[Expectation, ...]
    idle_fails: bool | None = None
    """Whether a run that does nothing fails one of its checks, as admission found
    (the case is not vacuous: :func:`~zeroclaw_eval.case.suite.vacuity`); ``None``:
    not known."""

    @property
    def name(self) -> str:
        return self.trace.model_name

    def grade(self, run: RunRecord) -> tuple[CheckResult, ...]:
        """Every check of every expectation, in declaration order; none short-circuits another.

        A family that raises while grading yields one failed check naming the family
        and its plugin: a grading bug must never read as a pass, nor stop the suite.
        """
        results: list[CheckResult] = []
        for expectation in self.expectations:
            try:
                results.extend(expectation.family.grade(expectation.params, run))
            except Exception as exc:
                results.append(
                    CheckResult(
                        expectation.name,
                        False,
                        f"family {expectation.name!r} of plugin {expectation.plugin!r} raised "
                        f"{type(exc).__name__}: {exc}",
                    )
                )
        return tuple(results)


def admit_file(
    path: Path,
    registry: Registry,
    mode: RunMode,
    *,
    source: str | None = None,
    agent: AgentUnderTest | None = None,
) -> Case:
    """Read, validate and admit one fixture file. Raises :class:`AdmissionError`.

    ``source`` is how the file is named in messages and reports (default: ``path``);
    ``agent``, when given, may refuse what it cannot certify (see :func:`admit_data`).
    """
    name = source or str(path)
    raw_bytes = _read_fixture(path, name)
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AdmissionError(
            name, "", f"not UTF-8 text (invalid byte at offset {exc.start})"
        ) from None
    return admit_text(text, registry, mode, source=name, agent=agent)


#: Opening for reading must not wait: a FIFO's open blocks until a writer comes.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _read_fixture(path: Path, name: str) -> bytes:
    """The bytes of a regular file of at most :data:`MAX_FIXTURE_BYTES`, or an
    :class:`AdmissionError` saying what the path is instead.

    What the file is comes from the open descriptor, before anything is read: a
    FIFO would block a reader, and a device (a link to /dev/zero, say) never
    ends. One non-blocking open and an fstat cost half of a stat, an open and a
    file object: 8 -> 4 us a fixture.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except IsADirectoryError:
        raise AdmissionError(name, "", "is a directory, not a fixture file") from None
    except FileNotFoundError:
        raise AdmissionError(name, "", "cannot be read: no such file (dangling link?)") from None
    except OSError as exc:
        # A socket cannot be opened at all: say what it is, as for a pipe.
        with suppress(OSError):
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise AdmissionError(
                    name, "", "is not a regular file (a pipe, socket or device)"
                ) from None
        raise AdmissionError(name, "", f"cannot be read: {exc.strerror or exc}") from None
    try:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            raise AdmissionError(name, "", "is a directory, not a fixture file")
        if not stat.S_ISREG(status.st_mode):
            raise AdmissionError(name, "", "is not a regular file (a pipe, socket or device)")
        too_big = f"larger than {MAX_FIXTURE_BYTES // 2**20} MiB: too big to be a fixture"
        if status.st_size > MAX_FIXTURE_BYTES:
            raise AdmissionError(name, "", too_big)
        # A short read of a regular file is its end; a full one means it grew since
        # the fstat, and the rest is read too.
        data = os.read(fd, status.st_size + 1)
        if len(data) > status.st_size:
            parts = [data]
            while chunk := os.read(fd, 1 << 20):
                parts.append(chunk)
            data = b"".join(parts)
            if len(data) > MAX_FIXTURE_BYTES:
                raise AdmissionError(name, "", too_big)
        return data
    except OSError as exc:
        raise AdmissionError(name, "", f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def admit_text(
    text: str,
    registry: Registry,
    mode: RunMode,
    *,
    source: str,
    agent: AgentUnderTest | None = None,
) -> Case:
    """Admit a fixture given as JSON text; ``source`` names it in messages."""
    try:
        data = strictjson.loads(text.removeprefix("\ufeff"))
    except strictjson.StrictJSONError as exc:
        raise AdmissionError(source, dotted(exc.path), exc.message) from None
    return admit_data(data, registry, mode, source=source, agent=agent)


def admit_data(
    data: Any,
    registry: Registry,
    mode: RunMode,
    *,
    source: str,
    agent: AgentUnderTest | None = None,
) -> Case:
    """Admit an already parsed fixture document.

    After the mode's rules, ``agent`` (the agent under test, when given) refuses the
    families it cannot certify: a check it could only pass on a guess never runs.
    """
    if not isinstance(data, dict):
        raise AdmissionError(source, "", f"a fixture must be a JSON object, not {kind_of(data)}")
    if SCHEMA_KEY in data:  # for editors only: it says nothing about the case
        if not isinstance(data[SCHEMA_KEY], str):
            raise _problem(source, data, (SCHEMA_KEY,), "must be a string (the schema's URL)")
        data = {key: value for key, value in data.items() if key != SCHEMA_KEY}
    try:
        trace = LlmTrace.model_validate(data, strict=True)
    except ValidationError as exc:
        raise _from_validation(source, data, (), exc, LlmTrace) from None
    expectations, idle_fails = _admit_expects(
        source, data, trace.expects, registry, len(trace.turns)
    )
    for problem in mode.admit(trace):
        raise _problem(source, data, problem.path, problem.message)
    for problem in _unobservable(expectations, mode.unobservable, f"mode {mode.name!r}"):
        raise _problem(source, data, problem.path, problem.message)
    if mode.replays_scripts:
        scripted = [e for e in expectations if _has_replay_rules(e.family)]
        steps = trace.scripted_steps() if scripted else ()
        for expectation in scripted:
            for problem in expectation.family.replay_rules(expectation.params, steps):
                raise _problem(
                    source,
                    data,
                    ("expects", expectation.name, *problem.path),
                    f"{problem.message} (mode {mode.name!r} replays the script)",
                )
    for problem in admit_faults(trace):
        raise _problem(source, data, problem.path, problem.message)
    if trace.tool_results is not None or trace.tool_definitions is not None:
        from zeroclaw_eval.case.scripted import (  # only fixtures that script
            admit_tool_definitions,
            admit_tool_results,
        )

        model_calls = agent is None or agent.model_calls
        for problem in (
            *admit_tool_results(trace, model_calls=model_calls),
            *admit_tool_definitions(trace),
        ):
            raise _problem(source, data, problem.path, problem.message)
    if agent is not None:
        for problem in agent.admit(trace):
            raise _problem(source, data, problem.path, problem.message)
        missing = agent.unobservable
        if missing:  # worded only then: an agent that misses nothing need not have a label
            for problem in _unobservable(expectations, missing, f"agent {agent.label!r}"):
                raise _problem(source, data, problem.path, problem.message)
        if getattr(agent, "passes_replies_through", False) and mode.replays_scripts:
            for problem in _settled(source, expectations, trace, agent):
                raise _problem(source, data, problem.path, problem.message)
    return Case(source, trace, expectations, idle_fails)


def _settled(
    source: str, expectations: Sequence[Expectation], trace: LlmTrace, agent: AgentUnderTest
) -> Iterator[Problem]:
    """An entry the script settles as passing for ``agent``, which plays it as written
    (:meth:`~zeroclaw_eval.grading.family.Family.settled`)."""
    # Most cases have no family that reads the script here: they pay nothing for it.
    reading = [e for e in expectations if type(e.family).settled is not Family.settled]
    if not reading:
        return
    from zeroclaw_eval.case.consistency import script_of

    script = script_of(trace, True, agent.dialect)
    if script is None:
        return
    for expectation in reading:
        try:
            found = list(expectation.family.settled(expectation.params, script))
        except Exception as exc:  # a plugin's bug must not pass as an admitted case
            raise AdmissionError(
                source,
                dotted(("expects", expectation.name)),
                f"family {expectation.name!r} of plugin {expectation.plugin!r} failed "
                f"during admission: {type(exc).__name__}: {exc}",
            ) from None
        for problem in found:
            yield Problem(
                ("expects", expectation.name, *problem.path),
                f"cannot fail for agent {agent.label!r}, which plays the script as written: "
                f"{problem.message}",
            )


def _has_replay_rules(family: Family[Any]) -> bool:
    """Whether ``family`` has rules against a replayed script (most have none: the
    script's steps are then never summarised)."""
    return type(family).replay_rules is not Family.replay_rules


def _unobservable(
    expectations: Sequence[Expectation], missing: Mapping[str, str], who: str
) -> Iterator[Problem]:
    """An entry whose family reads evidence that ``who`` (an agent, a mode) cannot make
    observable: ``missing`` maps each such kind to the reason."""
    if not missing:
        return
    for expectation in expectations:
        # Run for every case a mode or agent misses something for: a set's
        # intersection, sorted only when there is one to name.
        unseen = missing.keys() & (expectation.family.evidence(expectation.params) or ())
        if unseen:
            yield Problem(
                ("expects", expectation.name),
                f"{who} cannot certify this family: {missing[min(unseen)]}",
            )


def _admit_expects(
    source: str, data: Any, expects: Mapping[str, Any], registry: Registry, turns: int
) -> tuple[tuple[Expectation, ...], bool]:
    """The admitted expectations, and whether a run that does nothing fails one of them
    (admission grades that run anyway: each entry must yield its checks)."""
    if not expects:
        raise AdmissionError(
            source, "expects", "declares no expectation: a case must assert something"
        )
    admitted: dict[str, Expectation] = {}
    for key, raw in expects.items():
        entry = registry.family(key)
        if entry is None:
            known = ", ".join(sorted(registry.families))
            if registry.blocked:  # the family may be one of theirs
                known += f"; blocked plugins: {', '.join(registry.blocked)}"
            raise AdmissionError(
                source,
                dotted(("expects", key)),
                f"unknown key: no such expectation family{did_you_mean(key, registry.families)}"
                f" (known: {known})",
            )
        family = entry.obj
        where: Path_ = ("expects", key)
        try:
            params = family.adapter.validate_python(raw, strict=True)
        except ValidationError as exc:
            raise _from_validation(source, data, where, exc, family.params) from None
        if not family.allow_empty_strings:
            for empty in _empty_strings(raw, ()):
                raise _problem(
                    source,
                    data,
                    where + empty,
                    "must not be empty (an empty string matches anything)",
                )
        admitted[key] = Expectation(family, params, entry.plugin)
    params_by_family = {key: expectation.params for key, expectation in admitted.items()}
    produces_checks = idle_fails = False
    nothing = empty_run()
    for key, exp in admitted.items():
        try:
            problems = list(exp.family.rules(exp.params, params_by_family))
            problems += [
                Problem(
                    path,
                    f"no run reaches turn {turn}: the fixture has {plural(turns, 'turn')}, "
                    "numbered from 0",
                )
                for path, turn in exp.family.turns_named(exp.params)
                if turn >= turns
            ]
            # Each declared entry yields exactly one check, whatever the run: grading
            # an empty run counts them without a second, drift-prone count method.
            graded = exp.family.grade(exp.params, nothing)
            read = exp.family.evidence(exp.params)
        except Exception as exc:  # a plugin's bug must not pass as an admitted case
            raise AdmissionError(
                source,
                dotted(("expects", key)),
                f"family {key!r} of plugin {exp.plugin!r} failed during admission: "
                f"{type(exc).__name__}: {exc}",
            ) from None
        for problem in problems:
            raise _problem(source, data, ("expects", key, *problem.path), problem.message)
        if not graded and expects[key] not in ([], {}):
            # The fixture declared something and the family graded nothing: the
            # family breaks its contract, and that is the plugin's to fix.
            raise AdmissionError(
                source,
                dotted(("expects", key)),
                f"family {key!r} of plugin {exp.plugin!r} returned no check for a declared "
                "entry: a defect of that plugin (grade() must return one check per entry), "
                "not of this fixture",
            )
        if read is not None and not read <= EVIDENCE:
            # An agent's unobservable evidence is looked up by these names: one it
            # does not know would be admitted for every agent, certified or not.
            raise AdmissionError(
                source,
                dotted(("expects", key)),
                f"family {key!r} of plugin {exp.plugin!r} reads evidence "
                f"{', '.join(sorted(read - EVIDENCE))}, not among {', '.join(sorted(EVIDENCE))}: "
                "a defect of that plugin, not of this fixture",
            )
        produces_checks = produces_checks or bool(graded)
        idle_fails = idle_fails or any(not check.passed for check in graded)
    if not produces_checks:
        raise AdmissionError(
            source, "expects", "declares nothing that would produce a check (every entry is empty)"
        )
    return tuple(admitted.values()), idle_fails


def _empty_strings(value: Any, path: Path_) -> Iterator[Path_]:
    """Paths of every empty string (value or key) inside a parameter value."""
    if value == "":
        yield path
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _empty_strings(item, (*path, index))
    elif isinstance(value, dict):
        for key, item in value.items():
            if key == "":
                yield (*path, key)
            yield from _empty_strings(item, (*path, key))


# --- turning errors into one line -------------------------------------------------


def _from_validation(
    source: str, data: Any, prefix: Path_, exc: ValidationError, root: Any
) -> AdmissionError:
    """Every problem pydantic found, the first as the error's own field and message:
    a typo'd key is shown next to the required key it was meant to be, and an
    unknown key close to a known one of ``root`` (the type validated) says which."""
    found: list[tuple[str, str]] = []
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        # pydantic places an error of a mapping's key at (..., key, "[key]"): the
        # field is the key itself, and the message says it is the key at fault.
        is_key = bool(loc) and loc[-1] == "[key]"
        path, value = _locate(data, (*prefix, *(loc[:-1] if is_key else loc)))
        message = describe(error, value)
        if is_key:  # every key is a string: "string should have at least 1 character"
            message = f"the key {message.removeprefix('string ')}"
        # A validator of a plugin's parameters may raise either type itself
        # (PydanticCustomError), with no location or context: then pydantic's words.
        if error["type"] == "extra_forbidden" and loc:
            known = model_keys(root, loc[:-1])
            message += did_you_mean(str(loc[-1]), known)
        context = error.get("ctx") or {}
        if error["type"] == "union_tag_invalid" and "discriminator" in context:
            key = str(context["discriminator"]).removeprefix("'").removesuffix("'")  # quoted
            path, value = _locate(data, (*path, key))
            kind = "response type" if root is LlmTrace else key  # or a plugin's union
            message = f"unknown {kind} (expected one of: {context['expected_tags']})"
        if (problem := (_field(path, value), message)) not in found:
            found.append(problem)
    (field, message), *more = found
    return AdmissionError(source, field, message, more)


def _problem(source: str, data: Any, path: Path_, message: str) -> AdmissionError:
    located, value = _locate(data, path)
    return _error(source, located, value, message)


def _error(source: str, path: Path_, value: Any, message: str) -> AdmissionError:
    return AdmissionError(source, _field(path, value), message)


def _field(path: Path_, value: Any) -> str:
    """``expects.max_tool_calls=-1``: the dotted path, and the value when it can be shown."""
    field = dotted(path)
    text = shown(value)
    if text is not None and field:
        field = f"{field}={text}"
    return field


def _locate(data: Any, loc: Iterable[Any]) -> tuple[Path_, Any]:
    """Follow a pydantic location through the raw document.

    Returns the path as it reads in the fixture (a discriminated union inserts its
    tag, ``text`` or ``tool_calls``, into the location; it is not a key of the
    document, so it is dropped) and the raw value there, or ``MISSING``.
    """
    path: list[str | int] = []
    current: Any = data
    parts = list(loc)
    entered = False  # a union tag can only come first inside a value (the root is no union)
    for position, part in enumerate(parts):
        # The tag is never the last part (errors inside the tagged model follow
        # it), and it must be checked before keys: a ``tool_calls`` response also
        # has a ``tool_calls`` key, which is not where the error is.
        if (
            entered
            and position < len(parts) - 1
            and isinstance(current, dict)
            and current.get("type") == part
        ):
            entered = False
            continue  # the union tag
        if isinstance(current, dict):
            current = current.get(part, MISSING)
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            current = current[part]
        else:
            current = MISSING
        path.append(part)
        entered = True
    return tuple(path), current
