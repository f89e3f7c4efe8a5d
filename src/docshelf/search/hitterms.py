"""The analysis of the hits a search returns, kept for the next searches.

Every hit's text is analysed again for its snippet, its matched words and its term share (the
keyword index keeps no positions): ~0.5 ms of Python per scifact-sized chunk, most of a search.
Agents ask one question several ways, so hits recur.
(Analysing the keyword side's first hits while the query is embedded on the other thread was
tried: no gain at 100k chunks on two cores, hybrid p50 20.0 / 19.0 / 20.3 ms against 18.7 / 18.9 /
19.8 without, in alternating runs.)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from docshelf.analyze import Analyzer, Token
from docshelf.analyze.language import language_of
from docshelf.types import contextual_text

__all__ = ["HitTerms"]


class _Lru:
    """A small thread-safe LRU map, one per searcher (a functools.lru_cache on a method is one per
    process and keeps every searcher it saw alive)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[object, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: object) -> object | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: object, value: object) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


class HitTerms:
    """``Analyzer.tokens`` of hit texts and ``terms`` of their titles and headings, cached.

    Keyed by the text itself, so an edited chunk is never answered from an old analysis.
    ``size`` texts are kept (~24 KB of tokens for a 1,250-character chunk: ~6 MB for 256).
    """

    def __init__(self, analyzer: Analyzer, size: int = 256) -> None:
        self.analyzer = analyzer
        self._tokens = _Lru(size)
        self._context = _Lru(size * 4)
        self._language = _Lru(size * 4)

    def tokens(self, text: str) -> list[Token]:
        found = self._tokens.get(text)
        if found is None:
            found = self.analyzer.tokens(text)
            self._tokens.put(text, found)
        return found  # type: ignore[return-value]

    def context(self, title: str | None, heading_path: Sequence[str]) -> frozenset[str]:
        """The terms of a hit's title and headings, which the keyword index holds with it."""
        key = (title, tuple(heading_path))
        found = self._context.get(key)
        if found is None:
            found = frozenset(self.analyzer.terms(contextual_text(title, tuple(heading_path), "")))
            self._context.put(key, found)
        return found  # type: ignore[return-value]

    def language(self, text: str) -> str:
        """``language_of(text)`` with the analyzer's vote (the fusion's other-language check)."""
        found = self._language.get(text)
        if found is None:
            found = language_of(text, self.analyzer.language)
            self._language.put(text, found)
        return found  # type: ignore[return-value]
