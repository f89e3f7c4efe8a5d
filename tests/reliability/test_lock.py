"""The writer lock is never held by two processes.

It used to be taken over when its record named a dead pid; but a new holder writes its record
only after its flock, so for a moment every holder is "a dead pid" to a third process, which
then removed the file and locked a new one. A few rounds of the stress here;
`python bench/reliability_bench.py` runs thousands.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from lockkit import stress

from docshelf.errors import StoreError
from docshelf.index.lock import LOCK_NAME, WriterLock, lock_owner


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("owner", ["dead", "alive"])
def test_a_held_lock_is_not_stolen_whatever_its_record_says(tmp_path: Path, owner: str) -> None:
    """A dead pid in the record is what a holder between its flock and its record looks like."""
    data = tmp_path / "data"
    data.mkdir()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    pid = _dead_pid() if owner == "dead" else sleeper.pid
    fd = os.open(data / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, json.dumps({"pid": pid, "proc_start": None}).encode())
        inode = os.fstat(fd).st_ino
        busy = pytest.raises(StoreError, match="is indexing; wait or retry")
        with busy as caught, WriterLock(data, timeout=0.3):
            pass
        assert str(pid) in str(caught.value)
        assert os.stat(data / LOCK_NAME).st_ino == inode  # the file was neither removed nor replaced
        assert lock_owner(data) == {"pid": pid, "proc_start": None}
    finally:
        os.close(fd)
        sleeper.kill()
        sleeper.wait()


def test_a_forked_child_does_not_keep_the_lock_of_a_killed_parent(tmp_path: Path) -> None:
    """A child forked without exec inherits the descriptor; the lock must die with its holder."""
    data = tmp_path / "data"
    script = textwrap.dedent(f"""
        import os, signal, time
        from pathlib import Path
        from docshelf.index.lock import WriterLock
        with WriterLock(Path({str(data)!r}), timeout=5):
            pid = os.fork()
            if pid == 0:
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 1)
                os.dup2(null, 2)
                time.sleep(30)
                os._exit(0)
            print(pid, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)  # dies holding the lock
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    child = int(proc.stdout.split()[0])
    try:
        with WriterLock(data, timeout=0):  # taken at once, not waited for: the child does not hold it
            assert lock_owner(data)["pid"] == os.getpid()  # type: ignore[index]
    finally:
        os.kill(child, 9)


def test_many_short_lived_writers_never_overlap(tmp_path: Path) -> None:
    assert stress(tmp_path / "data", rounds=40, writers=3) == 0
