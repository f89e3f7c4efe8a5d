"""The analysis of the hits a search returns, kept for the next searches.

Every hit's text is analysed again for its snippet, its matched words and its term share (the
keyword index keeps no positions): ~0.5 ms of Python per scifact-sized chunk, most of a search.
Agents ask one question several ways, so hits recur. A hybrid search also fills it with its
first keyword hits while its query is embedded (Searcher._pending): at 100k chunks, quiet machine,
hybrid p50 16.7 / 16.8 / 16.4 -> 14.4 / 14.4 / 14.1 ms in alternating runs; with another job on
one core no gain and no loss (20.4 / 19.3 -> 18.8 / 19.1 ms).
"""

from __future__ import annotations

from collections.abc import Sequence

from docshelf.analyze import Analyzer, Token
from docshelf.analyze.language import language_of
from docshelf.search.lru import Lru

__all__ = ["HitTerms"]


class HitTerms:
    """``Analyzer.tokens`` of hit texts and ``terms`` of their titles and headings, cached.

    Keyed by the text itself, so an edited chunk is never answered from an old analysis.
    ``size`` texts are kept (~24 KB of tokens for a 1,250-character chunk: ~6 MB for 256).
    """

    def __init__(self, analyzer: Analyzer, size: int = 256) -> None:
        self.analyzer = analyzer
        self._tokens = Lru(size)
        self._context = Lru(size * 4)
        self._language = Lru(size * 4)

    def tokens(self, text: str) -> list[Token]:
        """A hit text's tokens, analysed as a passage (its plain spellings too), so its snippet
        marks and matched words agree with what the keyword index matched."""
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
