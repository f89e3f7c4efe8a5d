"""Permission bits that count for root too: run a child without the capabilities that bypass them.

``as_plain_user()`` is a preexec function for subprocess (None when not root); run as a script,
``python permkit.py CMD...`` drops them and execs CMD (for launchers that take no preexec, such
as the MCP SDK's stdio client). Tests skip where the capabilities cannot be dropped.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from collections.abc import Callable

__all__ = ["as_plain_user", "drop_overrides", "plain_user_command"]

_DAC_CAPS = (1, 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
_PR_CAPBSET_DROP = 24


def drop_overrides() -> None:
    """Drop the capabilities that let root ignore permission bits (for this process's children)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in _DAC_CAPS:
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def as_plain_user() -> Callable[[], None] | None:
    """A preexec that makes permission bits count; skips the test where that is impossible."""
    if os.geteuid() != 0:
        return None
    probe = subprocess.run(["true"], preexec_fn=drop_overrides, capture_output=True)
    if probe.returncode != 0:
        import pytest

        pytest.skip("cannot drop CAP_DAC_OVERRIDE here, and root reads and writes any file")
    return drop_overrides


def plain_user_command(cmd: list[str]) -> list[str]:
    """``cmd`` run through this script, so that permission bits count for it."""
    as_plain_user()  # skips if impossible
    return [sys.executable, __file__, *cmd] if os.geteuid() == 0 else cmd


if __name__ == "__main__":
    drop_overrides()
    os.execvp(sys.argv[1], sys.argv[1:])
