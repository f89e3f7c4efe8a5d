"""The parsed text of documents read lately, kept for the next read of the same bytes.

A read parses the file again so that offsets and line numbers equal the citations; for a 500-page
PDF that took ~0.8 s each time the page's reader opened a passage or an agent read a page. A
long-lived process (the MCP server, the web page) now parses the same bytes with the same parsers
once: the key is the parser registry (a collection's recorded parse settings), the path (it picks
the parser) and a digest of the bytes, so a changed file is parsed again.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docshelf.parse import ParserRegistry

__all__ = ["MAX_CHARS", "parsed_text"]

MAX_CHARS = 16_000_000  # characters kept in all (1 to 4 bytes each as a str: at most ~64 MB)
MAX_DOCUMENTS = 16

_kept: OrderedDict[tuple[ParserRegistry, str, bytes], str] = OrderedDict()
_lock = threading.Lock()


def parsed_text(registry: ParserRegistry, data: bytes, path: str) -> str:
    """``registry.parse(data, path).text``, from the last parse of the same bytes when kept."""
    key = (registry, path, hashlib.blake2b(data, digest_size=16).digest())
    with _lock:
        text = _kept.get(key)
        if text is not None:
            _kept.move_to_end(key)
            return text
    text = registry.parse(data, path).text  # outside the lock: another read need not wait
    if len(text) <= MAX_CHARS // 2:  # one huge document does not push out all the others
        with _lock:
            _kept[key] = text
            while len(_kept) > MAX_DOCUMENTS or sum(map(len, _kept.values())) > MAX_CHARS:
                _kept.popitem(last=False)
    return text
