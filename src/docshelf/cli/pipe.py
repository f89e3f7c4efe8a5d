"""A reader that has gone (`docshelf ls | head -1`): the command ends as Unix tools end.

cat, grep and git die of SIGPIPE, which a shell shows as exit status 141; Python ignores the
signal and raises BrokenPipeError instead, which click turned into exit 1 (our "no results") and
the commands' own error handling into "check free disk space" (exit 5); rich, which prints
help and most output, sends stdout to /dev/null and exits 1 itself. The standard library only:
the search helper's client (cli/quick.py) uses it too.
"""

from __future__ import annotations

import errno
import os
import select
import sys
from collections.abc import Callable

__all__ = ["CLOSED", "hang_up", "hung_up", "reader_gone", "stdout_file", "writing"]

CLOSED = 141  # 128 + SIGPIPE


def reader_gone(exc: BaseException) -> bool:
    """Whether ``exc`` is stdout's reader having gone: EPIPE, and stdout's pipe has no reader (a
    broken socket to a server or the helper is no reason to fall silent)."""
    if not isinstance(exc, OSError) or exc.errno != errno.EPIPE:
        return False
    try:
        fd = sys.__stdout__.fileno()  # type: ignore[union-attr]
        poller = select.poll()
    except (AttributeError, OSError, ValueError):  # no stdout to ask, or no poll (Windows)
        return True
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def hang_up() -> int:
    """Send the rest of stdout nowhere (what is still buffered would fail again at exit) and
    return the exit status to end with."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.__stdout__.fileno())  # type: ignore[union-attr]
        finally:
            os.close(null)
    except (AttributeError, OSError, ValueError):
        pass
    return CLOSED


def writing(write: Callable[[], object]) -> int | None:
    """Run ``write``; CLOSED when stdout's reader goes meanwhile (the rest sent nowhere), else
    None. Any other OSError and every SystemExit pass through."""
    try:
        write()
    except OSError as exc:
        if not reader_gone(exc):
            raise
        return hang_up()
    return None


def stdout_file() -> tuple[int, int] | None:
    """What stdout is (device, inode), to tell later whether rich has sent it to /dev/null."""
    try:
        st = os.fstat(sys.__stdout__.fileno())  # type: ignore[union-attr]
    except (AttributeError, OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def hung_up(started: tuple[int, int] | None) -> bool:
    """Whether stdout, ``started`` at first, has since been sent to /dev/null (rich's answer to a
    reader that has gone, with exit status 1)."""
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    now = stdout_file()
    return started is not None and now is not None and now != started and now == (null.st_dev, null.st_ino)
