"""Permission bits that count for root too: run a child without the capabilities that bypass them.

``as_plain_user()`` is a preexec function for subprocess (None when not root); run as a script,
``python permkit.py CMD...`` drops them and execs CMD (for launchers that take no preexec, such
as the MCP SDK's stdio client). Tests skip where the capabilities cannot be dropped.
``as_nobody()`` runs docshelf as another user altogether (uid 65534), who owns none of the files.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import site
import subprocess
import sys
from collections.abc import Callable

__all__ = ["NOBODY", "as_nobody", "as_plain_user", "drop_overrides", "plain_user_command"]

NOBODY = 65534

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


def as_nobody() -> list[str]:
    """The command that runs ``docshelf`` as uid and gid 65534 with no groups (run as root), or as
    this user (who is no root already); skips where no such user can be made."""
    if os.geteuid() != 0:
        return [sys.executable, "-m", "docshelf"]
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        import pytest

        pytest.skip("setpriv (util-linux) is not installed: no way to run as another user")
    user = [setpriv, "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
    # that user may not reach this interpreter (pyenv under /root): then a system Python of the
    # same version, given this environment's site-packages
    boot = f"import site; [site.addsitedir(p) for p in {site.getsitepackages()!r}]"
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    tried = []
    for exe in dict.fromkeys([sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"]):
        probe = f"{boot}; import os, docshelf.cli, tantivy; assert os.getuid() == {NOBODY}"
        done = subprocess.run([*user, exe, "-c", probe], capture_output=True, text=True, cwd="/", timeout=60)
        if done.returncode == 0:
            return [*user, exe, "-c", f"{boot}; from docshelf.cli import main; main()"]
        tried.append(f"{exe}: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    import pytest

    pytest.skip(f"no Python that uid {NOBODY} can run with docshelf installed ({'; '.join(tried)})")


if __name__ == "__main__":
    drop_overrides()
    os.execvp(sys.argv[1], sys.argv[1:])
