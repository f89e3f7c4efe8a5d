"""ruff and mypy --strict are part of the test run, so a lint failure fails CI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "cmd",
    [
        [sys.executable, "-m", "ruff", "check", "src", "tests", "bench"],
        [sys.executable, "-m", "mypy"],
    ],
    ids=["ruff", "mypy"],
)
def test_lint(cmd: list[str]) -> None:
    pytest.importorskip(cmd[2], reason="dev tools not installed (pip install -e '.[dev]')")
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
