"""A query word typed with accents also meets the pages that write it without them.

A page holds the stems of its accented words' plain spelling too (analyzer v8), so a query typed
without accents finds pages written either way; the reverse did not (`facturación` found nothing
in notes that write `facturacion`), and where some notes write one and others the other, the
accented query found only the first kind. The plain spelling's stems are now
the word's alternatives: a chunk scores the best of the word's terms and those (a disjunction
max, never their sum), so a page written with accents, which holds both, gains nothing from them.
"""

from __future__ import annotations

from collections.abc import Sequence

from docshelf.analyze import Analyzer, Token
from docshelf.search.respell import word_terms

__all__ = ["accent_alternatives"]


def accent_alternatives(
    analyzer: Analyzer, query: str, tokens: Sequence[Token], also: Sequence[str]
) -> dict[str, list[str]]:
    """Query term -> the stems of its word's plain spelling that are not terms of that word (the
    first term of a word carries them); empty for a query of plain ASCII."""
    if query.isascii() or not analyzer.unaccented:
        return {}
    spans = word_terms(tokens)
    out: dict[str, list[str]] = {}
    # analysed as a page is: its accented words also get their plain spelling's stems, in place
    for t in analyzer.tokens(query, also, passage=True):
        own = spans.get((t.start, t.end))
        if own is not None and t.term not in own and t.term not in out.get(own[0], ()):
            out.setdefault(own[0], []).append(t.term)
    return out
