"""Reading ahead: a function over a sequence on daemon threads, a few results ahead of the reader.

The first phase of a sync reads, parses and chunks the next files (each thread mostly waiting on
its parse worker process, which chunks too) while the caller's thread swaps the last ones into
the store; results come back in order. The threads are daemons: Ctrl-C is never held up by a
file still parsing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

__all__ = ["Ahead"]

_T = TypeVar("_T")
_R = TypeVar("_R")
_POLL_S = 0.1


class Ahead(Generic[_T, _R]):
    """``fn(item)`` for each item on ``threads`` threads, at most ``depth`` items ahead of the
    iteration, results in the items' order; an exception ``fn`` raised is raised where its result
    would have come. ``close`` (or leaving the ``with`` block) stops the threads after the items
    they are on."""

    def __init__(
        self, fn: Callable[[_T], _R], items: Iterable[_T], depth: int = 2, threads: int = 1,
        name: str = "ahead",
    ) -> None:  # fmt: skip
        self._fn = fn
        self._items = iter(enumerate(items))
        self._depth = max(1, depth, threads)
        self._cond = threading.Condition()
        self._results: dict[int, tuple[bool, _R | BaseException]] = {}
        self._next = 0  # the item the reader waits for
        self._taken = 0  # items handed to a thread
        self._exhausted = False
        self._closed = False
        self._threads = [
            threading.Thread(target=self._run, name=f"docshelf-{name}-{i}", daemon=True)
            for i in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed and not self._exhausted and self._taken >= self._next + self._depth:
                    self._cond.wait()
                if self._closed or self._exhausted:
                    return
                try:
                    i, item = next(self._items)
                except StopIteration:
                    self._exhausted = True
                    self._cond.notify_all()
                    return
                self._taken += 1
            try:
                out: tuple[bool, _R | BaseException] = (True, self._fn(item))
            except BaseException as exc:  # handed to the reader, raised there
                out = (False, exc)
            with self._cond:
                self._results[i] = out
                self._cond.notify_all()

    def __iter__(self) -> Iterator[_R]:
        return self

    def __next__(self) -> _R:
        with self._cond:
            while self._next not in self._results:
                if self._exhausted and self._next >= self._taken:
                    raise StopIteration
                self._cond.wait(_POLL_S)
            ok, value = self._results.pop(self._next)
            self._next += 1
            self._cond.notify_all()
        if not ok:
            assert isinstance(value, BaseException)
            raise value
        return value  # type: ignore[return-value]

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def __enter__(self) -> Ahead[_T, _R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
