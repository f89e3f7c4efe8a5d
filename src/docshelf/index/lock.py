"""One writer per index: an exclusive ``flock`` on ``write.lock`` in the data dir.

The file holds the owner's pid and start time, so a waiting process can say who is indexing.
flock is released by the kernel when its holder dies. The record is only a hint: a new holder
writes it after its flock, so a held lock may name the previous, dead owner for a moment; the
file is therefore never removed or replaced on the strength of its record (doing so let two
processes hold it). A child forked without exec closes its inherited descriptor at once, so the
lock cannot outlive its holder in a child. Threads of one process take turns through an
in-process lock, so the lock is also re-entrant for the thread that holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from docshelf.errors import StoreError

__all__ = ["LOCK_NAME", "WriterLock", "lock_owner", "pid_alive"]

LOCK_NAME = "write.lock"
_POLL_S = 0.05


class _Local:
    """The in-process side of one lock file: which thread holds it, how often, and its descriptor."""

    def __init__(self) -> None:
        self.mutex = threading.RLock()
        self.depth = 0
        self.fd: int | None = None
        self.held: contextlib.ExitStack | None = None  # the store's own guard (PostgreSQL), if any


_LOCALS: dict[str, _Local] = {}
_LOCALS_GUARD = threading.Lock()


def _local(path: Path) -> _Local:
    with _LOCALS_GUARD:
        return _LOCALS.setdefault(str(path), _Local())


def _forget_in_child() -> None:
    """In a forked child: close inherited lock descriptors (close only: LOCK_UN would unlock the
    parent's lock too) and start with fresh in-process state."""
    global _LOCALS_GUARD
    for local in _LOCALS.values():
        if local.fd is not None:
            with contextlib.suppress(OSError):
                os.close(local.fd)
        if local.held is not None:
            _ORPHANS.append(local.held)  # never closed here: that would end the parent's session
    _LOCALS.clear()
    _LOCALS_GUARD = threading.Lock()


_ORPHANS: list[contextlib.ExitStack] = []


os.register_at_fork(after_in_child=_forget_in_child)


def _proc_start(pid: int) -> str | None:
    """The process start time in clock ticks since boot (Linux), to tell a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]


def pid_alive(pid: int) -> bool:
    """True if the process exists and is not a zombie (an unreaped dead process)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def _alive(owner: dict[str, Any]) -> bool:
    pid = owner.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return True  # unknown owner: never steal
    if not pid_alive(pid):
        return False
    started = owner.get("proc_start")
    now = _proc_start(pid)
    return not (started and now and started != now)


def lock_owner(data_dir: Path) -> dict[str, Any] | None:
    """What the lock file says about its last owner (pid, proc_start, acquired_at), if anything."""
    try:
        raw = (data_dir / LOCK_NAME).read_text()
        owner = json.loads(raw) if raw.strip() else None
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) else None


class WriterLock:
    """``with WriterLock(data_dir, timeout):`` makes this thread the index's only writer.

    ``guard(seconds left)``, entered after the lock file and left before it, is the store's own
    writer lock (a PostgreSQL database shared by several machines: ``Store.writer_guard``).
    """

    def __init__(
        self,
        data_dir: Path,
        timeout: float = 30.0,
        guard: Callable[[float], contextlib.AbstractContextManager[None]] | None = None,
    ) -> None:
        self.path = Path(data_dir) / LOCK_NAME
        self.timeout = timeout
        self.guard = guard
        self._local = _local(self.path)

    def acquire(self) -> None:
        local = self._local
        deadline = time.monotonic() + self.timeout
        # watch.lock_timeout_s may be inf ("as long as it takes"); acquire() takes no more than this
        if not local.mutex.acquire(timeout=min(max(self.timeout, 0.0), threading.TIMEOUT_MAX)):
            raise StoreError(
                f"another thread of this docshelf process (pid {os.getpid()}) is indexing; wait or retry"
            )
        try:
            if local.depth == 0:
                local.fd = self._flock(deadline)
                if self.guard is not None:
                    self._enter_guard(local, max(0.0, deadline - time.monotonic()))
            local.depth += 1
        except BaseException:
            local.mutex.release()
            raise

    def release(self) -> None:
        local = self._local
        local.depth -= 1
        try:
            if local.depth == 0 and local.held is not None:
                held, local.held = local.held, None
                with contextlib.suppress(Exception):  # a lost session has let go already
                    held.close()
            if local.depth == 0 and local.fd is not None:
                fd, local.fd = local.fd, None
                # leave the owner's record behind (it says who indexed last); unlock and close
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
        finally:
            local.mutex.release()

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

    # ----- internals -----
    def _enter_guard(self, local: _Local, seconds: float) -> None:
        assert self.guard is not None and local.fd is not None
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(self.guard(seconds))
        except BaseException:
            fd, local.fd = local.fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            raise
        local.held = stack

    def _flock(self, deadline: float) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if time.monotonic() >= deadline:
                    owner = lock_owner(self.path.parent) or {}
                    pid = owner.get("pid", "unknown")
                    if owner and not _alive(owner):
                        # a holder that has not written its record yet, or a process that
                        # inherited the descriptor without forking through us: never stolen
                        pid = f"unknown; the last recorded one, {pid}, has exited"
                    raise StoreError(
                        f"another docshelf process (pid {pid}) is indexing; wait or retry"
                    ) from None
                time.sleep(_POLL_S)
                continue
            # an old docshelf may have replaced the file between our open and flock
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            record = {
                "pid": os.getpid(),
                "proc_start": _proc_start(os.getpid()),
                "acquired_at": time.time(),
            }
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(record).encode(), 0)
            return fd
