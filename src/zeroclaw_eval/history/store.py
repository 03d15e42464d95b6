"""The run history: every ``zeroclaw eval run`` appended to a SQLite database.

One row per run (when, which suite, mode and agent, the settings' digest and a
live run's generation settings, the plugins and their versions, the git commit,
how long, the verdict) and one per
case attempt (outcome, every check with its message, duration, tokens; for a run
against a real provider, the usage it reported and its cost). The
standard library's :mod:`sqlite3` is the whole engine: no server.

The schema has a version (``PRAGMA user_version``) and a list of migrations from
the first one on; opening an older history brings it up to date, and a history
from a newer zeroclaw-eval is refused rather than misread. The database runs in
WAL mode and every write is one ``BEGIN IMMEDIATE`` transaction under a generous
busy timeout, so several processes appending at once (parallel CI jobs on one
machine) queue instead of losing a run. Commits do not wait for the disk
(``synchronous=NORMAL``): a power loss may cost the last run, never the history.
"""

from __future__ import annotations

import errno
import json
import os
import random
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from zeroclaw_eval.errors import HistoryError
from zeroclaw_eval.report.model import CaseReport, SuiteReport

#: The default history, relative to the configuration file's directory.
DEFAULT_HISTORY = Path(".zeroclaw") / "history.sqlite"

#: How long a writer waits for another one to finish, in milliseconds.
BUSY_TIMEOUT_MS = 60_000

# Each migration is the list of statements that takes the schema from version
# N (its index) to N + 1. Never edit a shipped one: add the next.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            started_at TEXT NOT NULL,
            suite TEXT NOT NULL,
            mode TEXT NOT NULL,
            agent TEXT NOT NULL,
            config_digest TEXT NOT NULL,
            plugins TEXT NOT NULL,
            git_commit TEXT,
            git_dirty INTEGER,
            duration_s REAL NOT NULL,
            verdict TEXT NOT NULL,
            gating INTEGER NOT NULL,
            repeats INTEGER NOT NULL,
            total INTEGER NOT NULL,
            passed INTEGER NOT NULL
        )""",
        """CREATE TABLE attempts (
            run_id INTEGER NOT NULL REFERENCES runs(id),
            case_index INTEGER NOT NULL,
            case_name TEXT NOT NULL,
            source TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            passed INTEGER NOT NULL,
            error TEXT,
            checks TEXT NOT NULL,
            duration_s REAL NOT NULL,
            input_tokens INTEGER,
            output_tokens INTEGER,
            PRIMARY KEY (run_id, case_index, attempt)
        )""",
    ),
    (
        # Looking back goes by suite (the latest runs) and by case (its outcomes).
        "CREATE INDEX runs_by_suite ON runs (suite, id)",
        "CREATE INDEX attempts_by_case ON attempts (case_name, run_id)",
    ),
    (
        # A live run's generation settings (JSON), readable without the config file.
        "ALTER TABLE runs ADD COLUMN live_settings TEXT",
    ),
    (
        # What a run against a real provider spent, as the provider reported it: a
        # metered attempt's totals are NULL where a request lacked the figure. Rows
        # written before are not metered (replay's token counts are the script's).
        "ALTER TABLE attempts ADD COLUMN metered INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE attempts ADD COLUMN cached_input_tokens INTEGER",
        "ALTER TABLE attempts ADD COLUMN reasoning_tokens INTEGER",
        "ALTER TABLE attempts ADD COLUMN cost REAL",
    ),
)

#: The schema version this code writes and reads.
SCHEMA_VERSION = len(MIGRATIONS)


# The rows are named tuples: made on every run's way to the history (RunInfo), or by
# the thousand when reading it back, and a frozen dataclass costs several times
# more to define at import and to make.


class RunInfo(NamedTuple):
    """What a run was, beyond its report: when, with which agent and plugins, on
    which commit (``None`` outside a git work tree), and how long it took.
    ``suite`` is the name the run is filed under (default: the report's suite)."""

    started_at: str
    duration_s: float
    suite: str | None = None
    agent: str = "reference"
    plugins: Sequence[dict[str, str | None]] = ()
    git_commit: str | None = None
    git_dirty: bool | None = None


class Run(NamedTuple):
    """One row of ``runs``, as looking back reads it."""

    id: int
    started_at: str
    suite: str
    mode: str
    agent: str
    config_digest: str
    git_commit: str | None
    git_dirty: bool | None
    duration_s: float
    verdict: str
    repeats: int
    total: int
    passed: int
    plugins: list[dict[str, Any]]
    live_settings: dict[str, Any] | None = None
    """The ``[eval.live]`` generation settings of a live run, else ``None``."""


class Attempt(NamedTuple):
    """One case attempt of a run, with its checks as ``(check, passed, detail)`` and
    the scores of those that have one (:attr:`~zeroclaw_eval.report.model.CheckResult.score`).

    ``metered`` tells an attempt whose model side was a real provider that reported
    usage per request (a live run): its token counts and ``cost`` are the provider's,
    ``None`` where a request lacked the figure. An attempt that is not metered
    (replay) has the script's token counts, and no cost."""

    run_id: int
    case_name: str
    source: str
    attempt: int
    passed: bool
    error: str | None
    checks: list[tuple[str, bool, str]]
    duration_s: float
    input_tokens: int | None
    output_tokens: int | None
    scores: tuple[float, ...] = ()
    metered: bool = False
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: float | None = None


def verdict(report: SuiteReport) -> str:
    """``passed``, ``failed`` or ``interrupted``: the run's outcome, whatever the gating."""
    if report.interrupted is not None:
        return "interrupted"
    return "passed" if report.all_passed else "failed"


class History:
    """An open run history. Use :func:`open_history`; close it (or use ``with``)."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise HistoryError(f"{self.path}: cannot {doing}: {exc}") from None

    def append(self, report: SuiteReport, info: RunInfo) -> int:
        """Add a run and every attempt of its cases in one transaction; its id."""
        rows: list[tuple[Any, ...]] = []
        for index, case in enumerate(report.cases):
            for number, attempt in enumerate(case.attempts or (case,)):
                rows.append(_attempt_row(index, case, number, attempt))
        plugins = json.dumps(list(info.plugins), sort_keys=True)
        dirty = None if info.git_dirty is None else int(info.git_dirty)
        live = None
        if report.live_settings is not None:
            live = json.dumps(dict(report.live_settings), sort_keys=True, ensure_ascii=False)
        with self._errors("append the run"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                cursor = self._db.execute(
                    "INSERT INTO runs (started_at, suite, mode, agent, config_digest, plugins,"
                    " git_commit, git_dirty, duration_s, verdict, gating, repeats, total, passed,"
                    " live_settings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        info.started_at,
                        info.suite or report.suite,
                        report.mode,
                        info.agent,
                        report.config_digest,
                        plugins,
                        info.git_commit,
                        dirty,
                        info.duration_s,
                        verdict(report),
                        int(report.gating),
                        report.repeats,
                        len(report.cases),
                        report.passed_count,
                        live,
                    ),
                )
                run_id = cursor.lastrowid
                assert run_id is not None
                self._db.executemany(
                    "INSERT INTO attempts (run_id, case_index, case_name, source, attempt, passed,"
                    " error, checks, duration_s, input_tokens, output_tokens, metered,"
                    " cached_input_tokens, reasoning_tokens, cost)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(run_id, *row) for row in rows],
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return run_id

    def runs(self, suite: str | None = None, limit: int | None = None) -> list[Run]:
        """The latest runs (of ``suite``, if given), newest first."""
        query = "SELECT * FROM runs"
        parameters: list[Any] = []
        if suite is not None:
            query += " WHERE suite = ?"
            parameters.append(suite)
        query += " ORDER BY id DESC"
        if limit is not None:
            query += " LIMIT ?"
            parameters.append(limit)
        with self._errors("read the runs"):
            return [_run(row) for row in self._db.execute(query, parameters)]

    def run(self, run_id: int) -> Run | None:
        """The run with this id, if there is one."""
        with self._errors("read the runs"):
            row = self._db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return None if row is None else _run(row)

    def case_durations(
        self, suite: str, mode: str, least_cases: int, runs: int = 10
    ) -> dict[str, float]:
        """Each case's median attempt duration over the latest ``runs`` runs of
        ``suite`` in ``mode`` that ran at least ``least_cases`` cases.

        The floor leaves out the shards of a sharded run (and any narrower run):
        the shards of one run, appending as they finish, must not change the
        durations the shards still to start will cut the suite by.
        """
        query = (
            "SELECT id FROM runs WHERE suite = ? AND mode = ? AND total >= ?"
            " ORDER BY id DESC LIMIT ?"
        )
        with self._errors("read the runs"):
            ids = [row[0] for row in self._db.execute(query, (suite, mode, least_cases, runs))]
        import statistics  # for --shard only

        seconds: dict[str, list[float]] = {}
        for attempt in self.attempts(ids):
            seconds.setdefault(attempt.case_name, []).append(attempt.duration_s)
        return {name: statistics.median(values) for name, values in seconds.items()}

    def attempt_counts(self, run_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        """Per run: how many of its attempts passed, and how many there were."""
        counts: dict[int, tuple[int, int]] = {}
        for chunk in _chunks(run_ids):
            marks = ", ".join("?" for _ in chunk)
            query = (
                "SELECT run_id, sum(passed), count(*) FROM attempts"
                f" WHERE run_id IN ({marks}) GROUP BY run_id"
            )
            with self._errors("read the attempts"):
                counts.update((row[0], (row[1], row[2])) for row in self._db.execute(query, chunk))
        return counts

    def attempts(
        self, run_ids: Sequence[int], case: str | None = None, *, source: str | None = None
    ) -> list[Attempt]:
        """Every attempt of these runs (of the cases named ``case``, and of the fixture
        ``source`` as reports name it, if given), in run and suite order."""
        found: list[Attempt] = []
        for chunk in _chunks(sorted(run_ids)):
            marks = ", ".join("?" for _ in chunk)
            query = f"SELECT * FROM attempts WHERE run_id IN ({marks})"
            parameters: list[Any] = list(chunk)
            if case is not None:
                query += " AND case_name = ?"
                parameters.append(case)
            if source is not None:
                query += " AND source = ?"
                parameters.append(source)
            query += " ORDER BY run_id, case_index, attempt"
            with self._errors("read the attempts"):
                found.extend(_attempt(row) for row in self._db.execute(query, parameters))
        return found


def _chunks(run_ids: Sequence[int], size: int = 500) -> list[list[int]]:
    """Run ids in groups small enough for one query (older SQLite allow 999 parameters)."""
    ids = list(run_ids)
    return [ids[start : start + size] for start in range(0, len(ids), size)]


# json.dumps(..., ensure_ascii=False) builds an encoder on every call; an attempt
# row is written for every case of every run.
_encode = json.JSONEncoder(ensure_ascii=False).encode


def _attempt_row(index: int, case: CaseReport, number: int, attempt: CaseReport) -> tuple[Any, ...]:
    # A check with a score keeps it as a fourth element: older rows have three.
    checks = _encode(
        [
            [check.check, check.passed, check.detail]
            if check.score is None
            else [check.check, check.passed, check.detail, check.score]
            for check in attempt.checks
        ]
    )
    return (
        index,
        case.name,
        case.source,
        number,
        int(attempt.passed),
        attempt.error,
        checks,
        attempt.duration_s,
        attempt.input_tokens,
        attempt.output_tokens,
        int(bool(attempt.usage)),
        attempt.cached_input_tokens,
        attempt.reasoning_tokens,
        attempt.cost,
    )


def _run(row: sqlite3.Row) -> Run:
    return Run(
        id=row["id"],
        started_at=row["started_at"],
        suite=row["suite"],
        mode=row["mode"],
        agent=row["agent"],
        config_digest=row["config_digest"],
        git_commit=row["git_commit"],
        git_dirty=None if row["git_dirty"] is None else bool(row["git_dirty"]),
        duration_s=row["duration_s"],
        verdict=row["verdict"],
        repeats=row["repeats"],
        total=row["total"],
        passed=row["passed"],
        plugins=json.loads(row["plugins"]),
        live_settings=None if row["live_settings"] is None else json.loads(row["live_settings"]),
    )


def _attempt(row: sqlite3.Row) -> Attempt:
    checks = json.loads(row["checks"])
    return Attempt(
        run_id=row["run_id"],
        case_name=row["case_name"],
        source=row["source"],
        attempt=row["attempt"],
        passed=bool(row["passed"]),
        error=row["error"],
        checks=[(str(c), bool(p), str(d)) for c, p, d, *_ in checks],
        duration_s=row["duration_s"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        scores=tuple(float(check[3]) for check in checks if len(check) > 3),
        metered=bool(row["metered"]),
        cached_input_tokens=row["cached_input_tokens"],
        reasoning_tokens=row["reasoning_tokens"],
        cost=row["cost"],
    )


def open_history(path: Path, *, create: bool = True, writable: bool = False) -> History:
    """Open (``create``: and make if missing) the history at ``path``, migrated to
    :data:`SCHEMA_VERSION`; ``writable`` also proves that it can be written.

    Raises :class:`HistoryError` naming the file when it cannot be created or
    written, is not a SQLite database (or is corrupt), is some other program's
    database, or comes from a newer schema.
    """
    if not create and not path.is_file():
        raise HistoryError(f"{path}: no run history here (zeroclaw eval run writes one)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # mkdir's own words ("File exists") would not say which
        raise HistoryError(
            f"{path}: cannot create the history's directory: "
            f"{path.parent} is a file, not a directory"
        ) from None
    except OSError as exc:
        raise HistoryError(
            f"{path}: cannot create the history's directory: {exc.strerror or exc}"
        ) from None
    if writable:
        _refuse_unwritable(path)
    try:
        connection = sqlite3.connect(
            _location(path, create, writable),
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            uri=True,
        )
    except sqlite3.Error as exc:
        raise HistoryError(f"{path}: cannot open the history: {exc}") from None
    connection.row_factory = sqlite3.Row
    history = History(path, connection)
    try:
        _prepare(history, connection, writable)
    except BaseException:
        connection.close()
        raise
    return history


def _location(path: Path, create: bool, writable: bool) -> str:
    """The URI SQLite opens ``path`` by: read and write, unless only read.

    Read only (``eval history``, ``compare``), the history is opened ``mode=ro``;
    on a read-only file system (a mounted artifact, a CI cache) it is opened
    ``immutable``, since SQLite cannot make the shared-memory file a WAL database
    is otherwise read through, and nothing can write it there meanwhile.
    """
    path = path.resolve()  # what SQLite opens is what is checked
    uri = path.as_uri()  # percent-encoded: a "?" or "#" in a name stays a name
    if create or writable:
        return uri
    if not os.access(path.parent, os.W_OK) and not os.access(path, os.W_OK):
        return f"{uri}?mode=ro&immutable=1"
    return f"{uri}?mode=ro"


def _refuse_unwritable(path: Path) -> None:
    """Refuse to write a history that cannot be written, saying why (a read-only file
    system, no permission), before SQLite's own "unable to open database file"."""
    target = path if path.exists() else path.parent
    try:
        descriptor = os.open(target, os.O_RDWR if target is path else os.O_RDONLY)
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            return  # not a matter of permission (a directory, say): SQLite says what
        reason = exc.strerror or str(exc)
    else:
        os.close(descriptor)
        if os.access(path.parent, os.W_OK):
            return
        reason = "its directory cannot be written"  # the WAL files live beside it
        statvfs = getattr(os, "statvfs", None)  # not on Windows
        if statvfs is not None and statvfs(path.parent).f_flag & os.ST_RDONLY:
            reason = os.strerror(errno.EROFS)
    read = "read it with zeroclaw eval history or compare; " if target is path else ""
    raise HistoryError(
        f"{path}: cannot write the history: {reason} ({read}write the run elsewhere with "
        "--history, or not at all with --no-history)"
    )


def _prepare(history: History, db: sqlite3.Connection, writable: bool) -> None:
    path = history.path
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # In WAL mode, NORMAL commits without waiting for the disk: a run appended
        # just before the machine loses power may be lost, never the file. The
        # history is a record for people, not the gate (docs/RELIABILITY.md).
        db.execute("PRAGMA synchronous = NORMAL")
        version = _version(db)
    except sqlite3.DatabaseError as exc:
        raise HistoryError(f"{path}: not a readable SQLite database ({exc})") from None
    _refuse_newer(path, version)
    if version == SCHEMA_VERSION:
        if writable:  # a write that is rolled back: fails now on a read-only file
            with history._errors("write the history"):
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                finally:
                    db.execute("ROLLBACK")
        return
    with history._errors("set up the history"):
        # Before anything is written to it. The version and the tables are read in
        # one transaction: another process may be creating the history right now,
        # and a version read earlier, beside tables read later, would look foreign.
        db.execute("BEGIN")
        try:
            _refuse_foreign(path, db, _version(db))
        finally:
            db.execute("COMMIT")
        _use_wal(db)
        db.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while this one waited for the lock.
            version = _version(db)
            _refuse_newer(path, version)
            _refuse_foreign(path, db, version)
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")


def _use_wal(db: sqlite3.Connection) -> None:
    """Put the history in WAL mode, waiting for the file as long as a write would.

    The switch needs the file to itself, and SQLite answers "database is locked"
    at once instead of calling its busy handler: processes setting up one new
    history at the same time would fail. So this one waits and tries again.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.005 + random.random() * 0.02)  # apart, not in step


def _version(db: sqlite3.Connection) -> int:
    value: int = db.execute("PRAGMA user_version").fetchone()[0]
    return value


def _refuse_foreign(path: Path, db: sqlite3.Connection, version: int) -> None:
    if version == 0 and db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
        raise HistoryError(
            f"{path}: a SQLite database, but not a zeroclaw-eval history "
            "(it has tables and no schema version)"
        )


def _refuse_newer(path: Path, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise HistoryError(
            f"{path}: history schema version {version} is newer than this zeroclaw-eval "
            f"reads ({SCHEMA_VERSION}); upgrade zeroclaw-eval, or pass --history for another file"
        )
