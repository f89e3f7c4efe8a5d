"""The languages an index's documents are in, for queries whose own language cannot be told.

A query of a few words ("crème brûlée") gives the stop-word vote nothing to go on, so it got the
configured languages' stems (English, German) while the French passages hold French stems: it
matched nothing. The counts a sync keeps (meta "languages", index/scope.py) say which other
languages the index holds; the stems of the most used ones are added for such a query. Any share
counts: one French note among sixty English ones (2% of the words) was unfindable by its own
words when only languages with 5% counted, and a language's stems only ever match passages
stemmed in it, so a small share costs the other passages nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import Stemmer

from docshelf.analyze import Analyzer
from docshelf.analyze.language import count_language
from docshelf.analyze.scripts import decode_scripts
from docshelf.store.base import Store

__all__ = ["CorpusLanguages", "main_languages"]

MAX_EXTRA = 3
_TTL_S = 5.0  # a search re-reads the counts at most this often (one meta read: a round trip on PostgreSQL)
SAMPLE_CHUNKS = 2000
_STEMMED = frozenset(Stemmer.algorithms()) | {"tagalog"}


def main_languages(
    counts: dict[str, float], configured: Sequence[str], limit: int | None = MAX_EXTRA
) -> tuple[str, ...]:
    """The ``limit`` languages with a stemmer that hold the most words, not configured."""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    keep = [lg for lg, n in ranked if n > 0 and lg in _STEMMED and lg not in configured]
    return tuple(keep[:limit])


class CorpusLanguages:
    """``main_languages`` of one store's counts, re-read at most every few seconds."""

    def __init__(self, store: Store, analyzer: Analyzer) -> None:
        self.store = store
        self.analyzer = analyzer
        self.configured = tuple(analyzer.languages)
        self._value: tuple[str, ...] = ()
        self._every: tuple[str, ...] = ()
        self._read_at = float("-inf")
        self._sampled: dict[str, float] | None = None

    def __call__(self) -> tuple[str, ...]:
        """The index's (at most) three most used languages with a stemmer, beyond the configured
        ones: the stems a query of no told language also gets. Three: each adds a stem per
        word to the query, and a language past the third is reached by respelling (respell.py)."""
        now = time.monotonic()
        if now - self._read_at >= _TTL_S:
            self._read_at = now
            recorded = self.store.get_meta("languages")
            counts = decode_scripts(recorded) if recorded is not None else self._sample()
            self._every = main_languages(counts, self.configured, None)
            self._value = self._every[:MAX_EXTRA]
        return self._value

    def every(self) -> tuple[str, ...]:
        """All the index's languages with a stemmer, not configured, the most used first."""
        self()
        return self._every

    def _sample(self) -> dict[str, float]:
        """An index from before the counts (until its next sync writes them): a sample of its
        passages, counted once per process (~0.3 s for 2,000 passages)."""
        if self._sampled is None:
            self._sampled = {}
            for i, chunk in enumerate(self.store.iter_chunks()):
                if i >= SAMPLE_CHUNKS:
                    break
                count_language(self.analyzer.language, [chunk.text], self._sampled)
        return self._sampled
