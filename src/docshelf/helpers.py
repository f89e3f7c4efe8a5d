"""Worker threads one search uses for its two sides (the query embedding, the keyword search).

Both sides spend their time in native code that lets go of the interpreter (onnxruntime,
tantivy), so on two cores they overlap. Tasks sent here never wait on other tasks, so a small
shared pool cannot deadlock however many searches run at once.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["side_pool"]

_POOL: ThreadPoolExecutor | None = None
_LOCK = threading.Lock()


def side_pool() -> ThreadPoolExecutor:
    """The shared pool (made on first use: importing this starts no thread)."""
    global _POOL
    with _LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="docshelf-side")
        return _POOL
