"""The corpus git commit a build was made from."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

__all__ = ["git_state"]


def git_state(root: Path) -> tuple[str | None, bool | None]:
    """(HEAD commit, dirty) of the repository holding ``root``, or (None, None)."""
    git = shutil.which("git")
    if git is None:
        return None, None
    try:
        head = subprocess.run(
            [git, "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None, None
        status = subprocess.run(
            [git, "-C", str(root), "status", "--porcelain", "--", "."],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None, None
    return head.stdout.strip(), bool(status.stdout.strip())
