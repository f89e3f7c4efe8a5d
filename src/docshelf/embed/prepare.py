"""One-time model preparation (unpacking weights, building a graph), announced to listeners.

It takes seconds and happens once per cache dir, usually in the middle of a user's first command:
a front door listens and says what is going on; without listeners it is only logged.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["Preparation", "listen", "preparing"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Preparation:
    """A step starting (``seconds`` None) or ending (``ok`` says whether it finished)."""

    what: str
    seconds: float | None = None
    ok: bool = True


Listener = Callable[[Preparation], None]
_listeners: list[Listener] = []
_lock = threading.Lock()


def listen(listener: Listener) -> Callable[[], None]:
    """Call ``listener`` at the start and end of every preparation; returns the way to stop."""
    with _lock:
        _listeners.append(listener)

    def stop() -> None:
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return stop


def _tell(event: Preparation) -> None:
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(event)
        except Exception:  # a display problem must not fail the model build
            log.debug("preparation listener failed", exc_info=True)


@contextmanager
def preparing(what: str) -> Iterator[None]:
    """Wrap one preparation step; ``what`` says it in words ("building the ... graph")."""
    log.info("%s ...", what)
    _tell(Preparation(what))
    started = time.perf_counter()
    ok = False
    try:
        yield
        ok = True
    finally:
        seconds = time.perf_counter() - started
        log.info("%s: %s in %.1fs", what, "done" if ok else "failed", seconds)
        _tell(Preparation(what, seconds, ok))
