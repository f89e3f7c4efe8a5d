"""Parsing in a worker process: killed at ``parse.timeout_s``, its memory capped.

Parsers check their deadline between pages, rows and chapters, but a single step can run for
minutes (one 10 MB PDF content stream, a 5,000-level nested list) and Python code cannot be
stopped from outside; a worker process can be. The process keeps a few workers (a sync uses
``parse.workers`` at once), each serving one file at a time; they are started on first use,
replaced after a kill or a crash, and die with their parent (a worker exits when its pipe
closes). Their memory is capped with RLIMIT_DATA, so a decompression bomb ends as a MemoryError
there instead of swapping the machine. A caller may send a step to run on the parsed document
there too (``parse_then``: the indexer chunks there, and its own thread is left to write).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from docshelf.errors import ParseError

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from docshelf.parse.registry import ParserRegistry
    from docshelf.types import ParsedDocument

__all__ = ["ParseWorker", "parse_isolated", "parse_then", "trim_workers"]

_T = TypeVar("_T")

log = logging.getLogger("docshelf.parse")

_GRACE_S = 1.0  # past the limit: a parser's own deadline check reports first, with its reason
_START_AFTER_S = 0.1  # how long a file waits for a busy worker before another one starts
_PR_SET_PDEATHSIG = 1


class _Collect(logging.Handler):
    """The worker's log records (INFO and up), sent back with each answer: parsers log what
    libraries complain about, and that belongs in the parent's log, not the worker's stderr."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        record.msg, record.args = record.getMessage(), None  # arguments may not pickle
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        self.records.append(record)

    def take(self) -> list[logging.LogRecord]:
        out, self.records = self.records, []
        return out


def _serve(conn: Connection, memory_bytes: int) -> None:
    """The worker's loop: (registry | env | parse) messages in, one answer per parse out."""
    with contextlib.suppress(OSError, AttributeError):  # Linux: die with the parent, whatever happens
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:
        return  # the parent is already gone
    collect = _Collect()
    root = logging.getLogger()
    root.handlers[:] = [collect]
    root.setLevel(logging.INFO)
    if memory_bytes > 0:
        import resource

        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, memory_bytes))
    registry: ParserRegistry | None = None
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        kind = msg[0]
        if kind == "registry":
            sys.path[:] = msg[2]  # where the parent found its parsers' modules
            try:
                registry = pickle.loads(msg[1])
                conn.send(("ready", "", collect.take()))
            except Exception as exc:  # a parser class this process cannot import
                conn.send(("unpicklable", f"{type(exc).__name__}: {exc}", collect.take()))
            continue
        if kind == "env":
            os.environ.clear()
            os.environ.update(msg[1])
            continue
        _, data, path, then_blob = msg
        assert registry is not None
        try:  # a step of a module only the parent has (its __main__): done there
            then = pickle.loads(then_blob) if then_blob else None
        except Exception as exc:
            conn.send(("unpicklable", f"{type(exc).__name__}: {exc}", collect.take()))
            continue
        try:
            parsed = registry.parse(data, path)
            if then is not None:  # the parse is done: the parent's clock starts again for the step
                conn.send(("parsed", None, collect.take()))
            answer: tuple[str, Any] = ("ok", then(parsed) if then is not None else parsed)
        except ParseError as exc:
            answer = ("parse", str(exc))
        except MemoryError:
            answer = ("memory", "")
        except Exception as exc:  # the parser's bug: reported for this file, the worker goes on
            answer = ("failed", f"{type(exc).__name__}: {exc}")
        conn.send((*answer, collect.take()))


class ParseWorker:
    """A parsing process; ``parse`` answers like ``registry.parse`` or raises ParseError."""

    def __init__(self, memory_mb: float) -> None:
        self.memory_bytes = int(memory_mb * 1_048_576)
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._registry: tuple[int, bytes] | None = None
        self._env: dict[str, str] | None = None

    def _start(self) -> Connection:
        # a plain child process, not multiprocessing's spawn: that re-runs the caller's main
        # module (a script without a __main__ guard would index itself again)
        from multiprocessing.connection import Connection

        ours, theirs = socket.socketpair()
        # started from a thread that lasts as long as this process: Linux sends the worker its
        # parent-death signal when the *thread* that started it ends (a sync's reading threads do)
        proc = _SPAWNER.submit(
            subprocess.Popen,
            [sys.executable, "-m", "docshelf.parse.worker", str(theirs.fileno()), str(self.memory_bytes)],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
            # never the caller's stdout (the MCP stream) or stderr pipes: what libraries print comes
            # back as log records, and a worker must not keep a caller waiting for end of file
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own group: a kill also stops what it started (tesseract)
        ).result()  # fmt: skip
        theirs.close()
        conn = Connection(ours.detach())
        self._proc, self._conn, self._registry, self._env = proc, conn, None, None
        return conn

    def warm(self, registry: tuple[int, bytes] | None) -> None:
        """Start the process and load ``registry`` there (the parsers last sent: their id and
        pickle), so that its first parse waits for neither."""
        conn = self._start()
        if registry is not None:
            self._load(conn, registry, "(a new parse worker)")

    def _load(self, conn: Connection, registry: tuple[int, bytes], path: str) -> str | None:
        """Load ``registry`` (its id and pickle) in the worker; why it could not, else None."""
        conn.send(("registry", registry[1], list(sys.path)))
        kind, why = self._answer(conn, path, 60.0)
        if kind != "ready":
            return str(why)
        self._registry = registry
        return None

    def stop(self) -> None:
        """Kill the worker (and what it started); the next parse starts a new one."""
        proc, conn, self._proc, self._conn = self._proc, self._conn, None, None
        if proc is not None:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
        if conn is not None:
            conn.close()

    def parse(
        self, registry: ParserRegistry, blob: bytes, data: bytes, path: str, timeout_s: float,
        then: bytes = b"",
    ) -> tuple[Any, bool] | None:  # fmt: skip
        """The parsed file, or what ``then`` (a pickled function of it, given ``timeout_s`` of its own
        after the parse) made of it, and whether ``then`` ran (``blob``: the pickled ``registry``);
        only the parse when the worker cannot load the step (the caller runs it); None when the
        worker cannot load the registry's parsers (then parse in this process)."""
        alive = self._proc is not None and self._proc.poll() is None
        conn = self._conn if alive and self._conn is not None else self._start()
        if self._registry != (id(registry), blob):
            why = self._load(conn, (id(registry), blob), path)
            if why is not None:
                log.info("parsing in-process: the worker cannot load these parsers (%s)", why)
                return None
        env = dict(os.environ)  # what tesseract lookups and the like see, as in-process
        if env != self._env:
            conn.send(("env", env))
            self._env = env
        conn.send(("parse", data, path, then))
        kind, payload = self._answer(conn, path, timeout_s + _GRACE_S)
        stepped = bool(then)
        if kind == "unpicklable":  # still parsed here, in the worker; the step runs in the caller
            log.info("running the step after parsing in-process: the worker cannot load it (%s)", payload)
            conn.send(("parse", data, path, b""))
            kind, payload = self._answer(conn, path, timeout_s + _GRACE_S)
            stepped = False
        if kind == "parsed":
            kind, payload = self._answer(conn, path, timeout_s + _GRACE_S)
        if kind == "ok":
            return payload, stepped
        if kind == "parse":
            raise ParseError(payload)
        if kind == "memory":
            raise ParseError(
                f"{path}: parsing needed more than {self.memory_bytes // 1_048_576:,} MB "
                "(parse.max_memory_mb); raise the limit or exclude the file"
            )
        raise ParseError(f"{path}: parser failed: {payload}")

    def _answer(self, conn: Connection, path: str, timeout_s: float) -> tuple[str, Any]:
        """The worker's next answer within ``timeout_s`` (it is killed after)."""
        try:
            if conn.poll(timeout_s):
                kind, payload, *logged = conn.recv()
                for record in logged[0] if logged else ():
                    logger = logging.getLogger(record.name)
                    if logger.isEnabledFor(record.levelno):
                        logger.handle(record)  # as if the parser had logged here
                return str(kind), payload
        except (EOFError, OSError):
            code = self._proc.wait(5) if self._proc is not None else None
            self.stop()
            if code is not None and code < 0 and -code == signal.SIGKILL:
                why = "it was killed (out of memory?)"
            else:
                why = f"exit code {code}"
            raise ParseError(f"{path}: the parser crashed ({why}); exclude the file or report it") from None
        self.stop()
        raise ParseError(
            f"{path}: parsing took over {timeout_s - _GRACE_S:g} s (parse.timeout_s); raise the "
            "limit or exclude the file"
        )


class _Pool:
    """The process's parse workers, each one file at a time; a caller waits while ``size`` (its
    own bound) are busy. Idle ones are kept (a worker costs a process start and its parsers'
    imports). A file that finds none free waits ``_START_AFTER_S`` for a busy one, then another
    starts in the background, loading the parsers last sent, and the file takes whichever is free
    first (a few small files were parsed by the warm worker in milliseconds while the next waited
    ~1 s for a new process and its imports)."""

    def __init__(self, make: Callable[[float], ParseWorker] | None = None) -> None:
        self.make = make or ParseWorker
        self.idle: list[ParseWorker] = []
        self.busy = 0
        self.starting = 0
        self.waiting = 0
        self.keep: int | None = None  # after ``stop(keep)``: a worker up after it goes unless awaited
        self.registry: tuple[int, bytes] | None = None  # the parsers last sent, for new workers
        self.cond = threading.Condition()

    def take(self, memory_mb: float, size: int) -> ParseWorker:
        memory, size = int(memory_mb * 1_048_576), max(1, size)
        stale: list[ParseWorker] = []
        start_at: float | None = None
        with self.cond:
            self.keep = None
            self.waiting += 1
            try:
                while True:
                    if self.busy < size:
                        stale += [w for w in self.idle if w.memory_bytes != memory]
                        self.idle = [w for w in self.idle if w.memory_bytes == memory]
                        if self.idle:
                            self.busy += 1
                            worker = self.idle.pop()
                            break
                        if self.busy + self.starting < size:
                            # a busy worker is likely back within milliseconds (a small file);
                            # a new one costs a process and its imports, ~1 s of a core
                            now = time.monotonic()
                            if self.busy and start_at is None:
                                start_at = now + _START_AFTER_S
                            if start_at is not None and now < start_at:
                                self.cond.wait(start_at - now)
                                continue
                            self.starting += 1
                            threading.Thread(
                                target=self._start,
                                args=(memory_mb,),
                                name="docshelf-parse-start",
                                daemon=True,
                            ).start()
                    self.cond.wait()
            finally:
                self.waiting -= 1
        for old in stale:
            old.stop()
        return worker

    def _start(self, memory_mb: float) -> None:
        worker = self.make(memory_mb)
        try:
            worker.warm(self.registry)
        except Exception as exc:  # it starts again at its first parse, which reports what fails
            log.debug("a parse worker did not start in the background: %s", exc)
            worker.stop()
        with self.cond:
            self.starting -= 1
            unwanted = self.keep is not None and not self.waiting and len(self.idle) >= self.keep
            if not unwanted:
                self.idle.append(worker)
                self.cond.notify_all()  # callers of other sizes may wait too: each checks its own
        if unwanted:
            worker.stop()

    def give(self, worker: ParseWorker) -> None:
        with self.cond:
            self.busy -= 1
            self.idle.append(worker)
            self.cond.notify_all()

    def stop(self, keep: int = 0) -> None:
        """Stop the idle workers but ``keep`` of them (and those starting, once they are up,
        unless a caller waits for them)."""
        with self.cond:
            self.keep = keep
            idle, self.idle = self.idle[keep:], self.idle[:keep]
        for worker in idle:
            worker.stop()


_POOL = _Pool()
_SPAWNER = ThreadPoolExecutor(1, thread_name_prefix="docshelf-spawn")


def _drop_in_child() -> None:
    global _POOL, _SPAWNER
    _POOL = _Pool()  # a forked child never talks to its parent's workers
    _SPAWNER = ThreadPoolExecutor(1, thread_name_prefix="docshelf-spawn")


os.register_at_fork(after_in_child=_drop_in_child)


@atexit.register
def _stop_at_exit() -> None:
    _POOL.stop()


def trim_workers(keep: int = 1) -> None:
    """Let the idle parse workers but ``keep`` go (after a sync's many files: each holds its
    parsers' imports and the token counter's tables, ~150 MB, and a server lives long)."""
    _POOL.stop(keep)


def parse_isolated(
    registry: ParserRegistry, data: bytes, path: str, timeout_s: float, memory_mb: float, workers: int = 1
) -> ParsedDocument:
    """``registry.parse(data, path)`` in one of the process's parse workers (at most ``workers``
    busy at once), bounded in time and memory; in this process when the registry's parsers
    cannot be sent there (classes defined locally)."""
    parsed: ParsedDocument = _run(registry, data, path, timeout_s, memory_mb, None, workers)
    return parsed


def parse_then(
    registry: ParserRegistry, data: bytes, path: str, timeout_s: float, memory_mb: float,
    then: Callable[[ParsedDocument], _T], workers: int = 1,
) -> _T:  # fmt: skip
    """``then(parse_isolated(...))`` with both in the worker (``then`` given ``timeout_s`` of its
    own, its ParseError reported as the parse's; only its result comes back); both in this process
    when they cannot be sent there."""
    after: _T = _run(registry, data, path, timeout_s, memory_mb, then, workers)
    return after


def _run(
    registry: ParserRegistry, data: bytes, path: str, timeout_s: float, memory_mb: float,
    then: Callable[[ParsedDocument], Any] | None, workers: int,
) -> Any:  # fmt: skip
    pool = _POOL
    worker = pool.take(memory_mb, workers)
    try:
        try:
            blob = pickle.dumps(registry)
            then_blob = pickle.dumps(then) if then is not None else b""
        except (pickle.PicklingError, AttributeError, TypeError) as exc:  # e.g. a local class
            log.info("parsing in-process: these parsers cannot be sent to a worker (%s)", exc)
            done = None
        else:
            done = worker.parse(registry, blob, data, path, timeout_s, then_blob)
            if done is not None:
                pool.registry = (id(registry), blob)  # what a worker starting now loads
    finally:
        pool.give(worker)
    if done is not None:
        result, stepped = done
        return then(result) if then is not None and not stepped else result
    parsed = registry.parse(data, path)
    return then(parsed) if then is not None else parsed


if __name__ == "__main__":  # the worker process: python -m docshelf.parse.worker FD MEMORY_BYTES
    from multiprocessing.connection import Connection as _Connection

    _serve(_Connection(int(sys.argv[1])), int(sys.argv[2]))
