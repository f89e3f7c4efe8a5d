"""Reading one corpus file safely: regular files only, never past the size cap.

A file indexed as a regular file may have been swapped since for a FIFO (whose open or read
blocks forever), a device or a socket, or have grown to gigabytes. Every read of a corpus file
(indexing and re-reading for `read_document`) goes through :func:`read_regular`, which opens
without blocking, checks the opened descriptor (not the path, which can change in between) and
reads at most the cap.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from docshelf.errors import SourceError

__all__ = ["FileRefused", "read_regular", "special_kind"]


class FileRefused(SourceError):
    """The path is not a regular file, or is larger than the cap (``reason`` says which)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


def special_kind(mode: int) -> str:
    """What a file that is not a regular one is: "a FIFO", "a socket", ..."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"),
    ):  # fmt: skip
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of ``path``; FileRefused if it is not a regular file or exceeds ``max_bytes``.

    OSError (missing, permission denied) passes through for the caller to report.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(path, f"{special_kind(st.st_mode)}, not a regular file: never read")
        if st.st_size > max_bytes:
            raise FileRefused(path, _too_large(st.st_size, max_bytes))
        chunks: list[bytes] = []
        total = 0
        while True:  # a file still growing is cut off at the cap, not read on
            try:  # O_NONBLOCK stays on: disk files ignore it, a /proc file that would block says so
                part = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            except BlockingIOError:
                raise FileRefused(path, "reading it would block (a special file?): never read") from None
            if not part:
                break
            chunks.append(part)
            total += len(part)
            if total > max_bytes:
                raise FileRefused(path, _too_large(total, max_bytes))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _too_large(size: int, max_bytes: int) -> str:
    return (
        f"too large ({size / 1_048_576:.1f} MB > {max_bytes / 1_048_576:g} MB cap; raise sources.max_file_mb)"
    )
