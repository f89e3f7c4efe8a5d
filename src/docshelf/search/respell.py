"""A query word the index does not hold, tried as it may have been written instead.

`facturación` found nothing in a page that writes `facturacion`: a passage holds the stems of its
accented words' plain spelling (analyzer v8), but not the other way round, and the Spanish stem of
the accented word (`factur`) is not the plain word's (`facturacion`). A word of a language beyond
the index's three main ones got no stems in it (corpus_languages.py), so `şifremi` missed a
Turkish page in an index of five languages. Only a word none of whose terms the index holds is
respelled, so a query whose words are all found keeps exactly its terms (and the fusion its term
count); a word found nowhere added nothing to any score before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from docshelf.analyze import Analyzer, Token
from docshelf.analyze._fold import fold, unaccented
from docshelf.analyze.languages import script_of_word

__all__ = ["respelled", "word_terms"]

Known = Callable[[Sequence[str]], set[str]]
_MIN_LETTERS = 3  # the old Spanish preposition `á` became `a`, a term of nearly every passage


def respelled(
    analyzer: Analyzer,
    query: str,
    tokens: list[Token],
    also: Sequence[str],
    every: Sequence[str],
    known: Known,
) -> list[Token]:
    """``tokens`` with each alphabetic word the index lacks replaced by the terms of the first of
    its other spellings that the index holds: typed without accents, then stemmed in the index's
    other languages (``every`` beyond ``also``), then both. At most two lookups, none when no word
    could be respelled (a query of plain ASCII in an index of at most three languages)."""
    extra = tuple(lg for lg in every if lg not in also)
    spans = word_terms(tokens)
    words: dict[tuple[int, int], str] = {}
    for span in spans:
        raw = query[span[0] : span[1]]
        # CJK and Thai runs have no stems, plain spellings or alternatives to try
        if len(raw) < _MIN_LETTERS or not raw.isalpha() or script_of_word(raw) == "other":
            continue
        word = fold(raw)
        if extra or unaccented(word):
            words[span] = word
    if not words:
        return tokens
    have = known([term for span in words for term in spans[span]])
    tiers = {
        span: _tiers(analyzer, word, also, extra)
        for span, word in words.items()
        if not have.intersection(spans[span])
    }
    if not tiers:
        return tokens
    have = known([term for options in tiers.values() for tier in options for term in tier])
    chosen: dict[tuple[int, int], list[str]] = {}
    for span, options in tiers.items():
        found = next(
            ([t for t in dict.fromkeys(tier) if t in have] for tier in options if have.intersection(tier)),
            None,
        )
        if found:
            chosen[span] = found
    out: list[Token] = []
    for t in tokens:
        span = (t.start, t.end)
        if span not in chosen:
            out.append(t)
        elif chosen[span]:
            out += [Token(term, *span) for term in chosen[span]]
            chosen[span] = []  # the word's other tokens are dropped
    return out


def word_terms(tokens: Sequence[Token]) -> dict[tuple[int, int], list[str]]:
    """Each word's span in the query -> its terms (a word may have several: stems, parts)."""
    spans: dict[tuple[int, int], list[str]] = {}
    for t in tokens:
        spans.setdefault((t.start, t.end), []).append(t.term)
    return spans


@functools.lru_cache(maxsize=4)
def _whole(analyzer: Analyzer) -> Analyzer:
    """The analyzer without decompounding: a lone respelled word goes to the German decompounder
    under the fallback stems, which cut `kuhleren` into `kuhl` + `eren` (xquad-de)."""
    return Analyzer(
        analyzer.languages, analyzer.stopwords, analyzer.extra_stopwords, detect=analyzer.detect,
        decompound=False, unaccented=analyzer.unaccented,
    )  # fmt: skip


def _tiers(analyzer: Analyzer, word: str, also: Sequence[str], extra: tuple[str, ...]) -> list[list[str]]:
    """The spellings to try for ``word``, most likely first: typed without its accents (in the
    query's languages), then stemmed in the index's other languages, then both. The first tier
    the index holds wins, so a plain spelling beats a far-fetched stem of another language."""
    analyzer = _whole(analyzer)
    plain = unaccented(word)
    tiers = [analyzer.terms(plain, also)] if plain else []
    if extra:
        tiers.append(analyzer.terms(word, extra))
        if plain:
            tiers.append(analyzer.terms(plain, extra))
    return tiers
