"""Word segmentation for scripts written without spaces (Thai, Lao, Khmer, Myanmar).

ICU's dictionary-based word breaker (the ``icu4py`` wheel, ICU data included) is what Lucene's
Thai analyzer and Elasticsearch's ICU tokenizer use. Without it a run falls back to
overlapping character bigrams, which still match inside words, only less precisely.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

__all__ = ["segment"]

_Breaker = Callable[[str], list[tuple[int, int]]]


@functools.lru_cache(maxsize=1)
def _icu() -> _Breaker | None:
    """ICU's word breaker, or None when icu4py is not installed (bigrams then)."""
    try:
        from icu4py.breakers import WordBreaker
    except ImportError:
        return None

    def spans(run: str) -> list[tuple[int, int]]:
        # The locale only picks rule tweaks; the dictionary follows the script of the text.
        return list(WordBreaker(run, "th").segments())

    return spans


def segment(run: str) -> list[tuple[int, int]]:
    """(start, end) of each word in ``run`` (spaces, digits and marks are the caller's)."""
    icu = _icu()
    if icu is not None:
        return [(s, e) for s, e in icu(run) if not run[s:e].isspace()]
    if len(run) < 3:
        return [(0, len(run))]
    return [(i, i + 2) for i in range(len(run) - 1)]
