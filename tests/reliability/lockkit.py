"""Writer-lock stress: many short-lived writer processes; any two inside the lock at once is a fault.

Shared by tests/reliability/test_lock.py (a short run) and bench/reliability_bench.py (a long one).
Run as a script it is the stress driver: ``python lockkit.py DATA_DIR ROUNDS WRITERS``; it forks
``WRITERS`` children per round, each takes the lock once, holds it briefly and exits, and prints
how many times a child found another one inside (an O_EXCL marker file that already existed).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["stress"]

MARKER = "inside"


def _writer(data: Path, seed: int) -> int:
    from docshelf.index.lock import WriterLock

    rng = random.Random(seed)
    time.sleep(rng.random() * 0.002)  # staggered starts, so the takeover window gets hit
    with WriterLock(data, timeout=30):
        try:
            fd = os.open(data / MARKER, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return 1  # another writer is inside
        os.close(fd)
        time.sleep(rng.random() * 0.001)
        os.unlink(data / MARKER)
    return 0


def _drive(data: Path, rounds: int, writers: int) -> int:
    import docshelf.index.lock  # noqa: F401  (imported once, before the forks)

    data.mkdir(parents=True, exist_ok=True)
    overlaps = 0
    for r in range(rounds):
        children = []
        for w in range(writers):
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    code = _writer(data, r * 1000 + w)
                finally:
                    os._exit(code)
            children.append(pid)
        for pid in children:
            _, status = os.waitpid(pid, 0)
            overlaps += os.waitstatus_to_exitcode(status) != 0
    return overlaps


def stress(data: Path, rounds: int, writers: int) -> int:
    """Overlaps seen in ``rounds`` rounds of ``writers`` short-lived writer processes."""
    proc = subprocess.run(
        [sys.executable, __file__, str(data), str(rounds), str(writers)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"lock stress failed: {proc.stderr[-2000:]}")
    return int(proc.stdout.split()[-1])


if __name__ == "__main__":
    print(_drive(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
