"""A query word the index does not hold, tried in the index's other languages.

A word of a language beyond the index's three main ones got no stems in it (corpus_languages.py),
so `şifremi` missed a Turkish page in an index of five languages. Only a word none of whose terms
the index holds is respelled, so a query whose words are all found keeps exactly its terms (and
the fusion its term count); a word found nowhere added nothing to any score before. A word typed
with accents that pages write without them (`facturación`, `facturacion`) is accents.py's: a tier
here that tried it without accents first found nothing more on the held halves (issue 44).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from docshelf.analyze import Analyzer, Token
from docshelf.analyze._fold import fold
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
    """``tokens`` with each alphabetic word the index lacks replaced by its terms stemmed in the
    index's other languages (``every`` beyond ``also``), where the index holds some. At most two
    lookups, none in an index of at most three languages."""
    extra = tuple(lg for lg in every if lg not in also)
    if not extra:
        return tokens
    spans = word_terms(tokens)
    words: dict[tuple[int, int], str] = {}
    for span in spans:
        raw = query[span[0] : span[1]]
        # CJK and Thai runs have no stems, plain spellings or alternatives to try
        if len(raw) < _MIN_LETTERS or not raw.isalpha() or script_of_word(raw) == "other":
            continue
        words[span] = fold(raw)
    if not words:
        return tokens
    have = known([term for span in words for term in spans[span]])
    # a lone respelled word goes to the German decompounder under the fallback stems, which cut
    # `kuhleren` into `kuhl` + `eren` (xquad-de): the analyzer without decompounding
    whole = _whole(analyzer)
    options = {
        span: whole.terms(word, extra) for span, word in words.items() if not have.intersection(spans[span])
    }
    if not options:
        return tokens
    have = known([term for terms in options.values() for term in terms])
    chosen = {
        span: found
        for span, terms in options.items()
        if (found := [t for t in dict.fromkeys(terms) if t in have])
    }
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
    """The analyzer without decompounding (made once per analyzer)."""
    return Analyzer(
        analyzer.languages, analyzer.stopwords, analyzer.extra_stopwords, detect=analyzer.detect,
        decompound=False, unaccented=analyzer.unaccented,
    )  # fmt: skip
