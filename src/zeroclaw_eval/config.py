"""The ``[eval]`` table: where it is read from, and what it may hold.

Looked up in order: the file given with ``--config``; else, walking up from the
working directory to the filesystem root (as pytest and ruff do), the first
directory with a ``zeroclaw.toml`` (its ``[eval]`` table; other tables belong to
other tools) or a ``pyproject.toml`` holding a ``[tool.zeroclaw.eval]`` table
(``zeroclaw.toml`` first in one directory). Unknown keys are errors naming the key
and the file. Relative paths in a file are relative to that file.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from zeroclaw_eval.errors import ConfigError
from zeroclaw_eval.grading.family import NonEmptyStr
from zeroclaw_eval.protocol import DEFAULT_MAX_TOOL_ITERATIONS
from zeroclaw_eval.util.redact import Secrets
from zeroclaw_eval.util.wording import MISSING, describe, did_you_mean, dotted, shown

# The validators are built the first time a file is validated: a run with no
# configuration file, or a table that sets nothing, takes the defaults as they are
# (EvalConfig.defaults) and never builds them. Mutable defaults are plain values,
# which pydantic copies for each instance: a default_factory of a builtin (dict,
# list) has pydantic parse the builtin's text signature to call it, about 2 ms.
_MODEL_CONFIG = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

#: Default wall-clock limit on one case, in seconds.
DEFAULT_CASE_TIMEOUT_S = 300.0


class LiveConfig(BaseModel):
    """The ``[eval.live]`` table: the OpenAI-compatible endpoint the ``live`` mode calls.

    The API key itself is never part of the configuration: ``api_key_env`` names the
    environment variable that holds it, so no file, report or recording carries it.
    """

    model_config = _MODEL_CONFIG

    base_url: str | None = Field(None, min_length=1)
    """Where ``POST {base_url}/chat/completions`` is sent (``http://127.0.0.1:8080/v1``)."""
    model: str | None = Field(None, min_length=1)
    """The ``model`` field of every request."""
    api_key_env: str | None = Field(None, min_length=1)
    """The name of the environment variable holding the key; unset: no ``Authorization``."""
    timeout_s: float = Field(60.0, gt=0, allow_inf_nan=False)
    """How long one request may take, whole (connect, send, the reply to its last
    byte), before it is a run error for its case."""
    max_retries: int = Field(2, ge=0)
    """Retries of requests answered with 429 or 5xx: a budget for each case, shared
    by all of its requests."""
    retry_backoff_s: float = Field(1.0, ge=0, allow_inf_nan=False)
    """First wait before a retry, doubled each time, when the server sends no ``Retry-After``."""
    max_concurrency: int = Field(4, ge=1)
    """How many cases run at once."""
    temperature: float = Field(0.0, ge=0, allow_inf_nan=False)
    """The sampling temperature sent with every request."""
    max_tokens: int | None = Field(None, ge=1)
    """The most tokens one reply may have (sent only when set). A reply cut off there
    (``finish_reason`` ``length``) is a run error saying so, not an opaque timeout."""
    seed: int | None = None
    """The sampling seed (sent only when set; servers that support it repeat themselves)."""
    stop: list[NonEmptyStr] | None = None
    """Stop sequences (sent only when set)."""
    extra_body: dict[str, Any] = {}
    """More request fields, sent as given (``top_k``, ``repeat_penalty``...); they may
    not set a field the harness sends itself."""
    allowed_tools: list[NonEmptyStr] | None = None
    """The older place of ``[eval] allowed_tools``, read the same way (setting both is
    an error): the only tools offered to the agent and dispatched, in replay and live
    alike (unset: every registered tool); a call to another one fails."""

    @field_validator("base_url")
    @classmethod
    def _host_and_port(cls, value: str | None) -> str | None:
        # The socket layer takes a port modulo 65536 (99999 connects to 34463), so an
        # impossible port would reach some other server while the errors name this one.
        if value is not None:
            from urllib.parse import urlsplit

            parts = urlsplit(value)
            try:
                port = parts.port
            except ValueError:
                written = parts.netloc.rpartition(":")[2]
                raise ValueError(f"port {written} is not a number from 1 to 65535") from None
            if port == 0:
                raise ValueError("port 0 is not a number from 1 to 65535")
            if parts.scheme and not parts.hostname:
                raise ValueError("names no host")
        return value

    @field_validator("extra_body")
    @classmethod
    def _finite_numbers(cls, value: dict[str, Any]) -> dict[str, Any]:
        # JSON has no form for them: the request body would carry NaN, which no server parses.
        for path, item in _walk(value, ()):
            if isinstance(item, float) and not math.isfinite(item):
                raise ValueError(
                    f"{dotted(path)}={item}: not a finite number (a JSON request cannot carry it)"
                )
        return value

    def generation(self) -> dict[str, Any]:
        """The settings that shape what the model writes, as a live run's report and
        history row record them: ``model``, ``temperature``, ``max_tokens``, ``seed``,
        ``stop`` (``None``: not sent) and ``extra_body``."""
        return {
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "stop": None if self.stop is None else list(self.stop),
            "extra_body": dict(self.extra_body),
        }


def _iso_date(value: Any) -> Any:
    # A TOML date (checked = 2026-01-15) is as good as the quoted form.
    return value.isoformat() if isinstance(value, datetime.date) else value


class Rate(BaseModel):
    """One ``[eval.rates."MODEL"]`` table: prices per million tokens, in one currency
    throughout (the one ``max_cost`` is written in), and the day they were checked."""

    model_config = _MODEL_CONFIG

    input: float = Field(ge=0, allow_inf_nan=False)
    """The price of a million input tokens that were not read from the cache."""
    output: float = Field(ge=0, allow_inf_nan=False)
    """The price of a million output tokens (reasoning tokens are output tokens)."""
    cached_input: float | None = Field(None, ge=0, allow_inf_nan=False)
    """The price of a million input tokens read from the provider's cache; unset, a
    request with cached tokens cannot be priced."""
    cache_write_input: float | None = Field(None, ge=0, allow_inf_nan=False)
    """The price of a million input tokens written to the cache, for providers that
    bill them apart (Anthropic's ``cache_creation_input_tokens``)."""
    checked: Annotated[str, BeforeValidator(_iso_date)]
    """The day the prices were read from the provider's price list, ``YYYY-MM-DD``."""

    @field_validator("checked")
    @classmethod
    def _a_past_day(cls, value: str) -> str:
        try:
            # 3.11 reads 20260115 too: only the dashed form is a date here.
            if len(value) != 10:
                raise ValueError
            day = datetime.date.fromisoformat(value)
        except ValueError:
            raise ValueError("must be a date, YYYY-MM-DD") from None
        # A day of slack: the writer's "today" may be ahead of this machine's.
        if day > datetime.date.today() + datetime.timedelta(days=1):
            raise ValueError("is in the future: the day the rates were checked has passed")
        return value


def _walk(value: Any, path: tuple[str | int, ...]) -> Any:
    """Every value inside a TOML value, with its path."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, (*path, index))


#: How long a command agent may take to exit once its stdin is closed.
DEFAULT_AGENT_GRACE_S = 5.0

#: How long a started command agent may stay silent before its case fails.
DEFAULT_FIRST_REPLY_TIMEOUT_S = 30.0


#: Default limit on one request to a team's own MCP server, in seconds.
DEFAULT_MCP_UPSTREAM_TIMEOUT_S = 30.0


def _argv_or_url(value: Any) -> Any:
    """``mcp_upstream`` is an argv (a list) or an ``http://``/``https://`` URL: one
    error saying so for anything else, instead of one per branch of the union."""
    if isinstance(value, str):
        from urllib.parse import urlsplit

        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                "not an http:// or https:// URL; a server started over "
                'stdio is given as its argv, e.g. ["python", "server.py"]'
            )
    elif value is not None and not isinstance(value, list):
        raise ValueError(
            "expected the server's argv (a list of strings) or its http:// or https:// URL"
        )
    return value


class AgentTable(BaseModel):
    """The ``[eval.agent]`` table: a team's own agent, reached through the model bridge.

    Exactly one of ``factory`` (Python, in-process) and ``command`` (any language,
    one process per case, JSON lines on stdin/stdout). Relative paths are relative
    to the configuration file: the factory's module is imported with that directory
    first on ``sys.path``, and a command word naming a file there is made absolute.
    """

    model_config = _MODEL_CONFIG

    factory: str | None = Field(None, min_length=1)
    """``module:callable`` called as ``factory(base_url=, api_key=, workspace=)`` (and
    ``mcp_url=`` with ``tools = "served"``) once per case attempt: a Python agent,
    in-process. Give exactly one of ``factory`` and ``command``."""
    command: list[NonEmptyStr] | None = Field(None, min_length=1)
    """The argv of the agent process (any language), started once per case attempt in
    the case workspace."""
    env: dict[str, str] = {}
    """Variables added to the agent process's environment (``command`` only)."""
    grace_s: float = Field(DEFAULT_AGENT_GRACE_S, gt=0, allow_inf_nan=False)
    """How long the process may take to exit after its stdin is closed before it is killed."""
    first_reply_timeout_s: float = Field(DEFAULT_FIRST_REPLY_TIMEOUT_S, gt=0, allow_inf_nan=False)
    """How long a started process may stay silent (no line on stdout, no request to
    the model bridge) before its case fails with the tail of its stderr: an agent
    that cannot start costs seconds, not ``case_timeout_s`` (``command`` only)."""
    max_concurrency: int | None = Field(None, ge=1)
    """How many cases run at once: in replay exactly this many (default 1); in live
    mode no more than ``[eval.live] max_concurrency`` either."""
    tools: Literal["own", "served"] = "own"
    """``own``: the agent runs tools of its own; ``served``: it takes the case's tools
    from the harness's MCP server (a factory's ``mcp_url=``, a command's
    ``ZEROCLAW_EVAL_MCP_URL``), so what it dispatched is graded."""
    dialect: str = Field("chat", min_length=1)
    """How the agent talks to its model: a registered dialect's name (``zeroclaw eval
    plugins`` lists them). It says where the agent shows the model a tool's result and
    what its framework adds around it, so that the harness reads the calls and results
    off the wire the agent's way (``docs/AGENTS.md``)."""
    mcp_upstream: Annotated[
        list[NonEmptyStr] | str | None, BeforeValidator(_argv_or_url), Field(min_length=1)
    ] = None
    """The team's own MCP server: its argv (stdio, started for each case) or its
    ``http://``/``https://`` URL (streamable HTTP, connected to for each case). Its
    tools are served beside the registered ones in a run that talks to a real model;
    ``record`` keeps their results as the fixture's ``tool_results``. Needs
    ``tools = "served"``."""
    mcp_upstream_timeout_s: float = Field(DEFAULT_MCP_UPSTREAM_TIMEOUT_S, gt=0, allow_inf_nan=False)
    """How long the team's MCP server may take to answer one request (its start and
    handshake included) before the case it serves fails."""

    @field_validator("factory")
    @classmethod
    def _module_colon_callable(cls, value: str | None) -> str | None:
        if value is not None:
            module, colon, attribute = value.partition(":")
            if not colon or not module.strip() or not attribute.strip():
                raise ValueError("expected module:callable, e.g. my_pkg.agent:make_agent")
        return value

    @property
    def attached(self) -> str:
        """What the table attaches, as written: the factory's ``module:callable``, or
        the command line."""
        import shlex

        return self.factory if self.factory is not None else shlex.join(self.command or ())

    @model_validator(mode="after")
    def _one_attachment(self) -> AgentTable:
        if (self.factory is None) == (self.command is None):
            raise ValueError("give exactly one of factory (Python) and command (any language)")
        if self.command is None:
            # Settings of the agent's process: a factory has none, and they would be
            # silently ignored.
            for key in ("env", "grace_s", "first_reply_timeout_s"):
                if key in self.model_fields_set:
                    raise ValueError(f"{key} is only for a command agent")
        if self.mcp_upstream is not None and self.tools != "served":
            raise ValueError(
                'mcp_upstream serves its tools to the agent: it needs tools = "served"'
            )
        return self


def _agent_form(value: Any) -> str:
    return "table" if isinstance(value, (dict, AgentTable)) else "name"


AgentSetting = Annotated[
    Annotated[str, Tag("name"), Field(min_length=1)] | Annotated[AgentTable, Tag("table")],
    Discriminator(_agent_form),
]
"""``[eval] agent = "NAME"`` (a registered agent) or an ``[eval.agent]`` table."""

_UNION_TAGS = {"agent": ("name", "table")}
"""Tags pydantic inserts into error locations below these keys; not keys of the file."""


class EvalConfig(BaseModel):
    """The harness settings. Command-line flags override what a file says."""

    model_config = _MODEL_CONFIG

    suite_dir: str = Field("evals/regression", min_length=1)
    """The suite ``zeroclaw eval run`` runs when ``--suite`` is not given."""
    mode: str = Field("replay", min_length=1)
    """The run mode (``replay`` plays the fixtures' scripted responses)."""
    format: str = Field("text", min_length=1)
    """The formatter for the report on stdout."""
    max_tool_iterations: int = Field(DEFAULT_MAX_TOOL_ITERATIONS, ge=1)
    """How many model round trips asking for tools one turn may take."""
    case_timeout_s: float = Field(DEFAULT_CASE_TIMEOUT_S, gt=0, allow_inf_nan=False)
    """Wall-clock seconds one case (its run and its grading) may take before it is a
    run error and the suite moves on. Generous by default: replay cases take
    milliseconds, live ones seconds; the bound is there so that a hung tool or
    provider costs minutes and a report, not the whole CI job."""
    gating: bool = True
    """Whether failures make ``zeroclaw eval run`` exit 1. Only non-gating suites
    (capability, live) turn it off; the regression gate never does."""
    live: LiveConfig = Field(default_factory=LiveConfig.model_construct)
    """The ``[eval.live]`` table, read by the ``live`` mode."""
    plugins: dict[str, dict[str, Any]] = {}
    """Each plugin's own table, ``[eval.plugins.NAME]``: validated against the settings
    model the plugin registers, and handed to that plugin only, when a run opens
    (:mod:`zeroclaw_eval.plugins.settings`)."""
    allowed_tools: list[NonEmptyStr] | None = None
    """The only registered tools offered to the agent and dispatched (served, for an
    agent served its tools), in every mode (unset: every registered tool); a call to
    another one fails. ``[eval.live] allowed_tools``, its older place, still counts;
    setting both is an error."""
    report: list[NonEmptyStr] = []
    """Extra reports, each ``FORMAT:PATH`` as ``--report`` takes them (``junit:out.xml``;
    a relative PATH is relative to the file; ``-`` is stdout; an ``http(s)://`` URL,
    kept as it is, for a format that sends its report: ``otel``). ``--report``
    replaces them."""
    repeats: int = Field(1, ge=1)
    """How many times each case runs, each attempt with a fresh agent, tools and
    workspace. With gating on, a case passes only if every attempt passed."""
    pass_k: list[Annotated[int, Field(ge=1)]] | None = Field(None, min_length=1)
    """The k of the pass@k and pass^k figures in the report (default: 1 and ``repeats``)."""
    history: str | None = Field(None, min_length=1)
    """The SQLite run history ``zeroclaw eval run`` appends to (default:
    ``.zeroclaw/history.sqlite`` beside the configuration file)."""
    agent: AgentSetting = "reference"
    """The agent under test: a registered agent's name, or an ``[eval.agent]`` table."""
    drift: Literal["fail", "warn", "off"] = "fail"
    """What replay does when a step's stored request differs from the request the
    agent made: ``fail`` the case (a failed check showing the diff), ``warn`` (the
    case keeps its verdict, the report shows the diff), or ``off`` (not compared)."""
    drift_ignore: list[NonEmptyStr] = []
    """Paths of the normalised request drift never compares, in every case
    (``settings.temperature``, ``messages.*.content``, ``tools.echo.description``)."""
    report_requests: Literal["failed", "all", "off"] = "failed"
    """Which cases' model requests the JSON report carries (normalised, bounded):
    those of failed cases, of every case, or none."""
    rates: dict[NonEmptyStr, Rate] = {}
    """What each model costs, ``[eval.rates."MODEL"]``: prices per million tokens and
    the day they were checked. A live run prices each reply at the rate of the model
    it names (else the model asked for); ``max_cost`` needs one for every model that
    answers, and a model without one leaves the cost undecided, never free."""

    @model_validator(mode="after")
    def _one_offer(self) -> EvalConfig:
        if self.allowed_tools is not None and self.live.allowed_tools is not None:
            raise ValueError(
                "eval.allowed_tools and eval.live.allowed_tools are both set: keep "
                "eval.allowed_tools (the offer holds in every mode)"
            )
        return self

    @property
    def offer(self) -> list[str] | None:
        """The tools offered to the agent (``allowed_tools``, where either place sets
        it), or ``None``: every registered tool."""
        return self.allowed_tools if self.allowed_tools is not None else self.live.allowed_tools

    @property
    def offer_key(self) -> str:
        """The key the offer is read from, as messages name it."""
        return "eval.live.allowed_tools" if self.allowed_tools is None else "eval.allowed_tools"

    @classmethod
    def defaults(cls) -> EvalConfig:
        """The configuration of a run that sets nothing: every key at its default.

        Equal to ``EvalConfig()``, without building the validators that an empty
        table does not need (defaults are valid by definition).
        """
        return cls.model_construct()

    def digest(self) -> str:
        """A short, stable fingerprint of the settings that can change a verdict.

        Two runs with the same digest ran their cases under the same settings, so
        their results can be merged or compared. Where the report goes
        (``format``) does not change a verdict and is left out.
        """
        try:
            settings = _plain(self)
        except TypeError:  # a value JSON has no form for (a TOML date): pydantic's
            settings = self.model_dump(mode="json")
        for key in _PRESENTATION_KEYS:
            settings.pop(key, None)
        canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def secrets(self) -> Secrets:
        """What the harness holds and never writes nor hands an agent: the value of
        the variable ``[eval.live] api_key_env`` names, read from the environment now
        (in any mode: the variable is withheld from agents even in replay)."""
        named = self.live.api_key_env
        return Secrets.from_environment(() if named is None else (named,))


def _plain(value: Any) -> Any:
    """``value`` as ``model_dump(mode="json")`` writes it, for the JSON values a
    configuration holds, without the serializer a run with no file never builds.
    Raises :class:`TypeError` for any other value."""
    if isinstance(value, BaseModel):
        return {name: _plain(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        raise TypeError("a non-finite number")  # pydantic writes it as null
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise TypeError(type(value).__name__)


_PRESENTATION_KEYS = {"format", "report", "pass_k", "history"}
"""Settings of :class:`EvalConfig` that only say how a report is shown."""


DEFAULT_SUITE_DIR: str = EvalConfig.model_fields["suite_dir"].default
"""The default suite, read from the model so that no second literal can drift."""


class LoadedConfig(NamedTuple):
    """A configuration and where it came from.

    ``path`` is the file it was read from (``None`` for the defaults), ``table`` the
    table inside it (``eval`` or ``tool.zeroclaw.eval``), and ``base_dir`` the
    directory its relative paths are relative to.
    """

    config: EvalConfig
    base_dir: Path
    path: Path | None = None
    table: str = "eval"

    def field(self, key: str) -> str:
        """How to name one key of this configuration in an error message."""
        where = str(self.path) if self.path is not None else "default configuration"
        return f"{where}: {self.table}.{key}"


def load_config(path: Path | None = None, cwd: Path | None = None) -> LoadedConfig:
    """Read the configuration. Raises :class:`ConfigError` naming the file and key.

    ``path`` is an explicit ``--config`` file (its ``[eval]`` table, or
    ``[tool.zeroclaw.eval]`` when it is named ``pyproject.toml``). Without it, the
    first of ``cwd`` and its parents holding ``zeroclaw.toml`` or a ``pyproject.toml``
    with a ``[tool.zeroclaw.eval]`` table is read; if none does, the defaults apply.
    """
    cwd = cwd or Path.cwd()
    if path is not None:
        pyproject = path.name == "pyproject.toml"
        table, where = _eval_table(_read_toml(path), path, pyproject=pyproject)
        return LoadedConfig(_build(table, path, where), path.resolve().parent, path, where)
    return _walk_up(cwd)


def _walk_up(cwd: Path) -> LoadedConfig:
    """The configuration of the nearest directory at or above ``cwd`` that has one."""
    for directory in (cwd, *cwd.resolve().parents):
        for name, pyproject in (("zeroclaw.toml", False), ("pyproject.toml", True)):
            candidate = directory / name
            if candidate.is_file():
                table, where = _eval_table(_read_toml(candidate), candidate, pyproject=pyproject)
                if table is not None:
                    return LoadedConfig(
                        _build(table, candidate, where), directory, candidate, where
                    )
    return LoadedConfig(EvalConfig.defaults(), cwd)


def _read_toml(path: Path) -> dict[str, Any]:
    # Imported when there is a file to read: a run with no configuration needs no parser.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        with path.open("rb") as handle:
            document: dict[str, Any] = tomllib.load(handle)
            return document
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:  # tomllib decodes the bytes itself
        raise ConfigError(f"{path}: not UTF-8 text (invalid byte at offset {exc.start})") from None


def _eval_table(document: dict[str, Any], path: Path, *, pyproject: bool) -> tuple[Any, str]:
    """The raw ``[eval]`` table (``None`` if a pyproject.toml has none), and its name."""
    keys = ("tool", "zeroclaw", "eval") if pyproject else ("eval",)
    current: Any = document
    for depth, key in enumerate(keys):
        if not isinstance(current, dict):
            raise ConfigError(f"{path}: {'.'.join(keys[:depth])}: must be a table")
        current = current.get(key)
        if current is None:
            return ({} if not pyproject else None), ".".join(keys)
    if not isinstance(current, dict):
        raise ConfigError(f"{path}: {'.'.join(keys)}: must be a table")
    return current, ".".join(keys)


def _build(table: Any, path: Path, where: str) -> EvalConfig:
    if not table:  # no table, or one that sets nothing
        return EvalConfig.defaults()
    try:
        return EvalConfig.model_validate(table)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        loc = error["loc"]
        if len(loc) > 1 and loc[1] in _UNION_TAGS.get(str(loc[0]), ()):
            error["loc"] = (loc[0], *loc[2:])
        tables: dict[Any, type[BaseModel]] = {"live": LiveConfig, "agent": AgentTable}
        # A model-wide refusal (two keys that contradict each other) has no location.
        table_model = tables.get(error["loc"][0], EvalConfig) if error["loc"] else EvalConfig
        if error["loc"][:1] == ("rates",) and len(error["loc"]) > 2:  # inside one model's table
            table_model = Rate
        raise ConfigError(refusal(table, error, table_model, f"{path}: {where}")) from None


def refusal(table: Any, error: ErrorDetails, model: type[BaseModel], where: str) -> str:
    """``where.key=value: why`` for one thing pydantic refused in ``table``: the key's
    path, the value when it can be shown, and for an unknown key the keys ``model``
    knows (the closest first, when one is close). Also words a plugin's own table
    (:mod:`zeroclaw_eval.plugins.settings`)."""
    value: Any = table
    for part in error["loc"]:
        if isinstance(value, dict):
            value = value.get(part, MISSING)
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        else:
            value = MISSING
    if error["type"] == "extra_forbidden":
        known = ", ".join(model.model_fields) or "none"
        typo = did_you_mean(str(error["loc"][-1]), model.model_fields)
        message = f"unknown key{typo} (known keys: {known})"
    else:
        message = describe(error, value)
    field = f"{where}.{dotted(error['loc'])}"
    if (text := shown(value)) is not None:
        field += f"={text}"
    return f"{field}: {message}"
