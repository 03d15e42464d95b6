"""A MkDocs hook: a page's link to a file of the repository outside ``docs/``.

Pages link to the examples, tests and plugins they talk about with relative paths
(``../../examples/ci/evals.yml``), which work where the Markdown is read in the
repository but point nowhere on the built site. This hook checks that each such
target exists in the checkout (a missing one is a warning, so ``mkdocs build
--strict`` fails on it) and shows it on the site as the repository path it names.
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.plugins.repo_links")

LINK = re.compile(r"(?<!!)\[(?P<label>[^\]\n]*)\]\((?P<target>[^)\s#]+)(?P<frag>#[^)\s]*)?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)


def repository_path(page_src: str, target: str, docs_dir: Path) -> str | None:
    """The repository-relative path ``target`` names when it leaves ``docs/``, else None."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join("docs", posixpath.dirname(page_src), target))
    if joined == "docs" or joined.startswith("docs/"):
        return None
    return joined


def rewrite(markdown: str, page_src: str, docs_dir: Path) -> str:
    """``markdown`` with each link out of ``docs/`` shown as its repository path."""
    root = docs_dir.parent

    def replace(match: re.Match[str]) -> str:
        path = repository_path(page_src, match["target"], docs_dir)
        if path is None:
            return match.group(0)
        if path.startswith("..") or not (root / path).exists():
            log.warning("%s: the link to %r names no file of the repository", page_src, path)
            return match.group(0)
        label = match["label"]
        shown = f"`{path}`"
        return (
            shown
            if label.strip("`").rstrip("/") == path.split("/")[-1]
            or label.strip("`").rstrip("/") == path
            else f"{label} ({shown})"
        )

    pieces: list[str] = []
    last = 0
    for fence in FENCE.finditer(markdown):
        pieces.append(LINK.sub(replace, markdown[last : fence.start()]))
        pieces.append(fence.group(0))
        last = fence.end()
    pieces.append(LINK.sub(replace, markdown[last:]))
    return "".join(pieces)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs' hook: called with each page's Markdown before it is rendered."""
    return rewrite(markdown, page.file.src_uri, Path(config["docs_dir"]))
