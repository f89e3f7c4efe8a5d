"""The analysis of the hits a search returns, kept for the next searches.

Every hit's text is analysed again for its snippet, its matched words and its term share (the
keyword index keeps no positions): ~0.5 ms of Python per scifact-sized chunk, most of a search.
Agents ask one question several ways, so hits recur. A hybrid search also fills it with its
first keyword hits while its query is embedded (Searcher._pending): at 100k chunks, quiet machine,
hybrid p50 16.7 / 16.8 / 16.4 -> 14.4 / 14.4 / 14.1 ms in alternating runs; with another job on
one core no gain and no loss (20.4 / 19.3 -> 18.8 / 19.1 ms).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from docshelf.analyze import Analyzer, Token
from docshelf.analyze.language import language_of

__all__ = ["HitTerms"]

T = TypeVar("T")


class _Lru:
    """A small thread-safe LRU map, one per searcher (a functools.lru_cache on a method is one per
    process and keeps every searcher it saw alive)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """The value kept for ``key``, or ``make()``'s, kept (made outside the lock)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]  # type: ignore[no-any-return]
        value = make()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value


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
        return self._tokens.get(text, lambda: self.analyzer.tokens(text, passage=True))

    def context(self, title: str | None, heading_path: Sequence[str]) -> frozenset[str]:
        """The terms of a hit's title and headings, which the keyword index holds with it."""
        heads = tuple(heading_path)
        return self._context.get(
            (title, heads), lambda: frozenset(self.analyzer.chunk_terms(title, heads, ""))
        )

    def language(self, text: str) -> str:
        """``language_of(text)`` with the analyzer's vote (the fusion's other-language check and
        the nearest-neighbours note)."""
        return self._language.get(text, lambda: language_of(text, self.analyzer.language))
