"""Which cases a run runs: ``PATH...`` arguments, ``-k EXPR`` and ``--shard K/N``.

The whole of what was named is admitted first (a refused fixture fails every
selection and every shard, so no shard can be green while another is refused);
then ``-k`` keeps the cases it matches, and ``--shard`` keeps its slice of those.
A selection that keeps nothing is an error, never a green run of no cases.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from zeroclaw_eval.case.suite import admit_files, fixture_paths
from zeroclaw_eval.errors import SuiteLoadError
from zeroclaw_eval.report.model import plural

if TYPE_CHECKING:
    from zeroclaw_eval.agents.base import AgentUnderTest
    from zeroclaw_eval.case.admission import Case
    from zeroclaw_eval.config import EvalConfig
    from zeroclaw_eval.modes.base import RunMode
    from zeroclaw_eval.plugins.registry import Registry
    from zeroclaw_eval.selection.keyword import Expression
    from zeroclaw_eval.selection.shard import ShardSpec


class SelectionError(SuiteLoadError):
    """The selection kept no case: ``-k`` matched nothing, or a shard is empty."""


def named_files(paths: Sequence[Path]) -> list[Path]:
    """The fixture files ``PATH...`` names: a file as itself, a directory as its suite
    (its direct ``*.json`` children), in argument order, each file once.

    Raises :class:`SuiteLoadError` for a path that does not exist, and for a
    directory with no fixture (an empty suite is never green).
    """
    files: list[Path] = []
    seen: set[str] = set()
    for path in paths:
        if path.is_dir():
            found = fixture_paths(path)  # refuses an empty directory
        elif path.exists() or path.is_symlink():
            found = [path]  # admission says what is wrong with it, if anything
        else:
            raise SuiteLoadError(f"{path}: no such file or directory")
        for file in found:
            identity = os.path.realpath(file)
            if identity not in seen:
                seen.add(identity)
                files.append(file)
    return files


def load_named(
    paths: Sequence[Path],
    registry: Registry,
    mode: RunMode,
    *,
    source: Callable[[Path], str] = str,
    config: EvalConfig | None = None,
    agent: AgentUnderTest | None = None,
    gate: bool = False,
) -> list[Case]:
    """Admit every fixture ``paths`` names (see :func:`named_files`), or raise
    :class:`SuiteLoadError` listing every refusal (``config``, ``agent``, ``gate``: see
    :func:`admit_files`)."""
    return admit_files(
        named_files(paths),
        registry,
        mode,
        suite=suite_label(paths),
        source=source,
        config=config,
        agent=agent,
        gate=gate,
    )


def suite_label(paths: Sequence[Path]) -> str:
    """How a run of ``PATH...`` names its suite in reports: the arguments as given."""
    return " ".join(str(path) for path in paths)


def case_names(case: Case) -> tuple[str, str]:
    """The names ``-k`` matches: the case's name and its fixture's file name."""
    return case.name, PurePath(case.source.replace("\\", "/")).name


@dataclass(frozen=True)
class Selected:
    """The cases to run, and what they were chosen from."""

    cases: list[Case]
    suite_total: int
    """Cases admitted before ``-k`` and sharding."""
    shard: ShardSpec | None
    selected_total: int
    """Cases ``-k`` kept, before sharding."""


def select(
    cases: Sequence[Case],
    keyword: Expression | None = None,
    spec: ShardSpec | None = None,
    durations: Mapping[str, float] | None = None,
) -> Selected:
    """Apply ``-k`` then ``--shard`` to the admitted ``cases``.

    Raises :class:`SelectionError` when ``-k`` matches no case or the shard gets none.
    """
    chosen = list(cases)
    if keyword is not None:
        from zeroclaw_eval.selection.keyword import substring_matcher

        chosen = [case for case in chosen if keyword.evaluate(substring_matcher(*case_names(case)))]
        if not chosen:
            raise SelectionError(
                f"-k {keyword.text!r} matched none of the {plural(len(cases), 'case')}: "
                "a run of no cases is never green"
            )
    matched = len(chosen)
    if spec is not None:
        from zeroclaw_eval.selection.shard import shard

        chosen = shard(chosen, spec.index, spec.count, durations)
        if not chosen:
            raise SelectionError(
                f"--shard {spec}: no case falls in this shard ({plural(matched, 'case')} for "
                f"{spec.count} shards): use at most {plural(matched, 'shard')}"
            )
    return Selected(chosen, len(cases), spec, matched)
