"""The documentation site builds strictly and renders: its front page and a how-to
page, served on loopback, are screenshotted by headless Chromium (Debian's
``chromium``, which ``.ci/run`` installs) and the pictures are real pages, not
blank ones. Without chromium or mkdocs (the ``docs`` extra) the test is skipped,
and fails under CI."""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import PROJECT
from .test_trend_page import headless_chromium

MKDOCS = Path(sys.executable).with_name("mkdocs")


def mkdocs() -> str:
    if MKDOCS.is_file():
        return str(MKDOCS)
    if os.environ.get("CI"):
        pytest.fail("mkdocs is not installed (pip install -e '.[docs]')")
    pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site built strictly into a temporary directory, served on 127.0.0.1."""
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [mkdocs(), "build", "--strict", "--site-dir", str(out)],
        cwd=PROJECT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    handler = functools.partial(QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "link",
    [
        "[a page](how-to/no-such-page.md)",
        "[an anchor](how-to/ci.md#no-such-heading)",
        "[a repository file](../examples/no-such-file.py)",
    ],
)
def test_the_strict_build_fails_on_a_broken_link(link: str, tmp_path: Path) -> None:
    """What CI relies on: a link to nothing fails the build (and ``--quiet`` would hide
    the warning from strict mode, so neither .ci/run nor this test passes it)."""
    for entry in PROJECT.iterdir():
        if entry.name not in {"docs", ".git", ".venv", "site"}:
            (tmp_path / entry.name).symlink_to(entry)
    shutil.copytree(PROJECT / "docs", tmp_path / "docs")
    with (tmp_path / "docs" / "index.md").open("a", encoding="utf-8") as page:
        page.write(f"\n{link}\n")
    built = subprocess.run(
        [mkdocs(), "build", "--strict", "--site-dir", str(tmp_path / "out")],
        cwd=tmp_path,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 1, built.stderr[-2000:]
    assert re.search(r"Aborted with \d+ warnings in strict mode!", built.stdout + built.stderr)
    ci = (PROJECT / ".ci" / "run").read_text(encoding="utf-8")
    (line,) = [line for line in ci.splitlines() if "mkdocs build" in line]
    assert "--strict" in line.split() and not {"-q", "--quiet"} & set(line.split())


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def screenshot(url: str, out: Path, profile: Path) -> Path:
    result = subprocess.run(
        [
            *headless_chromium(profile),
            "--hide-scrollbars",
            "--window-size=1280,900",
            f"--screenshot={out}",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0 and out.is_file(), result.stderr[-2000:]
    return out


def png_pixels(path: Path) -> tuple[int, int, set[bytes]]:
    """Width, height and the distinct colours of an 8-bit RGB(A) PNG, read by hand."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), (depth, colour)
    size = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * size
    colours: set[bytes] = set()
    previous = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - size] if i >= size else 0
            up = previous[i]
            corner = previous[i - size] if i >= size else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (
                    line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)
                ) & 0xFF
        colours.update(bytes(line[i : i + 3]) for i in range(0, stride, size * 7))
        previous = line
    return width, height, colours


@pytest.mark.parametrize("page", ["", "how-to/own-agent/"], ids=["front page", "how-to"])
def test_the_page_renders(site: str, page: str, tmp_path: Path) -> None:
    shot = screenshot(f"{site}/{page}", tmp_path / "page.png", tmp_path / "profile")
    keep = os.environ.get("ZEROCLAW_EVAL_KEEP_SCREENSHOTS")
    if keep:  # to look at them: the file names say which page
        shutil.copy(shot, Path(keep) / f"{page.strip('/').replace('/', '-') or 'index'}.png")
    width, height, colours = png_pixels(shot)
    assert (width, height) == (1280, 900)
    # A blank or unstyled page has a handful of colours; a rendered Material page
    # (the header bar, the navigation, text anti-aliased on white) has hundreds.
    assert len(colours) > 50, len(colours)
