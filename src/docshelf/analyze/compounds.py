"""German compounds split in two against a word list (wordfreq's, when the package is installed).

``Hintergrundaufgaben`` is also indexed under ``hintergrund`` and ``aufgaben``, so it meets a page
that says ``Hintergrundtasks``. A word is split only when it is not itself a common word and both
parts (4+ letters, a linking s / es / n / en allowed) are: measured on the xquad-de questions
(bench/tune_analyzer.py, variant ``split=Z:L``), keyword nDCG@10 0.9419 -> 0.9479.
"""

from __future__ import annotations

import functools
import unicodedata

__all__ = ["MIN_LENGTH", "available", "split_compound"]

MIN_LENGTH = 8  # shorter words are rarely compounds, and their halves too short to mean much
_MIN_PART = 4
# zipf frequency (log10 per billion words) a part needs: 3 = about once per million words
_ZIPF = 2.4
_LINKS = ("s", "es", "n", "en")


@functools.cache
def _german_words() -> dict[str, float] | None:
    """Common German words (casefolded) -> frequency; None without the ``wordfreq`` package."""
    try:
        import wordfreq
    except ImportError:
        return None
    floor = 10 ** (_ZIPF - 9)
    out: dict[str, float] = {}
    for word, freq in wordfreq.get_frequency_dict("de", "large").items():
        if freq < floor:
            break  # the dict is ordered by frequency
        if word.isalpha():
            key = unicodedata.normalize("NFKC", word.casefold())
            out[key] = max(freq, out.get(key, 0.0))
    return out


@functools.cache
def _english_words() -> frozenset[str]:
    """English words (zipf >= 1.5): an undecided text such as a short query, which gets English
    and German stems, splits none of these (`turmeric` is no turm + eric). Without this list 148
    of the first 3,000 nfcorpus queries gained parts and its dev keyword nDCG@10 fell by 0.005;
    with it 9 do and the figure is unchanged (0.2861, bench/tune_analyzer.py)."""
    import wordfreq

    floor = 10 ** (1.5 - 9)
    out: set[str] = set()
    for word, freq in wordfreq.get_frequency_dict("en", "large").items():
        if freq < floor:
            break
        out.add(unicodedata.normalize("NFKC", word.casefold()))
    return frozenset(out)


def available() -> bool:
    """Whether the word list is installed (``pip install docshelf[german]``)."""
    return _german_words() is not None


def split_compound(word: str, german: bool = True) -> tuple[str, str] | None:
    """The two parts of a casefolded German compound, the split whose rarer part is most common.

    ``german=False``: the text may be English too, so an English word is left whole."""
    words = _german_words()
    if not words or len(word) < MIN_LENGTH or word in words:
        return None
    if not german and word in _english_words():
        return None
    best, parts = 0.0, None
    for i in range(_MIN_PART, len(word) - _MIN_PART + 1):
        left, right = word[:i], word[i:]
        tail = words.get(right, 0.0)
        if tail <= best:
            continue
        candidates = [left] + [left[: -len(link)] for link in _LINKS if left.endswith(link)]
        for stem in candidates:
            score = min(words.get(stem, 0.0), tail) if len(stem) >= _MIN_PART else 0.0
            if score > best:
                best, parts = score, (stem, right)
    return parts
