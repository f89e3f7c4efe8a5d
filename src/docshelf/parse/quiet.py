"""Third-party chatter (Python warnings, native libraries writing to stderr) goes to the log.

The terminal shows one line per skipped file; a library's "TIFFReadDirectory: Warning ..." or
openpyxl's UserWarning about a workbook's styles says nothing a user can act on, so it is
logged (visible with ``-v``) instead of printed between the report's lines.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator
from typing import IO

__all__ = ["native_stderr_to_log", "warnings_to_log"]

log = logging.getLogger("docshelf.parse")

_lock = threading.Lock()
_depth = 0
_saved_fd: int | None = None
_capture: IO[bytes] | None = None


@contextlib.contextmanager
def warnings_to_log(path: str) -> Iterator[None]:
    """Python warnings raised inside are logged (INFO, naming ``path``) instead of printed."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        log.info("%s: %s: %s", path, w.category.__name__, w.message)


@contextlib.contextmanager
def native_stderr_to_log(path: str) -> Iterator[None]:
    """What native code (libtiff, PDFium) writes to file descriptor 2 inside is logged.

    Nested and concurrent uses share one redirection (the first opens it, the last restores
    stderr), so threads parsing at once never leave stderr pointing at a closed file.
    """
    global _depth, _saved_fd, _capture
    try:
        fd = sys.__stderr__.fileno() if sys.__stderr__ is not None else 2
    except (AttributeError, OSError, ValueError):
        yield  # no real stderr (embedded interpreter): nothing to redirect
        return
    with _lock:
        if _depth == 0:
            try:
                _capture = tempfile.TemporaryFile()  # noqa: SIM115 (closed when the last user leaves)
                with contextlib.suppress(OSError, ValueError):
                    sys.stderr.flush()
                _saved_fd = os.dup(fd)
                os.dup2(_capture.fileno(), fd)
            except OSError:
                _capture, _saved_fd = None, None
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved_fd is not None and _capture is not None:
                os.dup2(_saved_fd, fd)
                os.close(_saved_fd)
                _capture.seek(0)
                output = _capture.read().decode("utf-8", "replace").strip()
                _capture.close()
                _capture, _saved_fd = None, None
                for line in output.splitlines():
                    if line.strip():
                        log.info("%s: %s", path, line.strip())
