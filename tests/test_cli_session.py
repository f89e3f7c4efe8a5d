"""docs/cli.md's terminal session is what docshelf prints today: bench/cli_session.py runs it again
(80-column pseudo-terminal, hash embedder) and the two agree but for what varies from run to run:
timings, sizes, how long ago, the corpus's git commit, and so where a long title is cut.

The captured session had drifted: it showed fused ranks where search now shows a confidence, and a
search that no longer printed as shown."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

ROOT = Path(__file__).resolve().parents[1]
HEADING = "## A session in a real terminal"


def _documented() -> str:
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    after = doc[doc.index(HEADING) :]
    block = re.search(r"```text\n(.*?)\n```", after, re.S)
    assert block is not None, "docs/cli.md has no session block"
    return block.group(1)


def _normal(text: str) -> str:
    text = re.sub(r"\b\d+ ms\b", "N ms", text)
    text = re.sub(r"\bin \d+(\.\d+)?s\b", "in Ns", text)
    text = re.sub(r"\(sqlite, [^)]*\)", "(sqlite, SIZE)", text)
    text = re.sub(r"just now|\b\d+ (min|h|days?) ago", "AGO", text)
    text = re.sub(r"\b[0-9a-f]{7,12}\b( dirty)?", "COMMIT", text)
    text = " ".join(text.split())  # the columns' widths follow "just now" / "1 min ago"
    text = text.replace(" with uncommitted changes: the index holds the working tree, not that commit", "")
    return re.sub(r"\S*…", "…", text)  # and so does where a title is cut


def test_the_documented_session_is_todays_output() -> None:
    inside = subprocess.run(["git", "-C", str(ROOT), "rev-parse"], capture_output=True)
    if inside.returncode != 0:
        pytest.skip("the session names the sample corpus's git commit: this is no git checkout")
    fresh = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cli_session.py")], capture_output=True, text=True, timeout=600
    )  # fmt: skip
    assert fresh.returncode == 0, fresh.stderr
    lines = fresh.stdout.splitlines()
    assert sum(line.startswith("$ docshelf ") for line in lines) >= 7
    assert max(cell_len(line) for line in lines) <= 80
    assert "Traceback" not in fresh.stdout and "error:" not in fresh.stdout
    assert _normal(_documented()) == _normal(fresh.stdout), (
        "docs/cli.md's session differs from today's output: run `python bench/cli_session.py` and "
        "paste what it prints into the session block"
    )
