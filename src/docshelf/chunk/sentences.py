"""Sentence boundaries for Latin and CJK scripts, as spans of the original text."""

from __future__ import annotations

import re
import unicodedata

from docshelf.parse.text import trim_span

__all__ = ["safe_cut", "split_sentences"]

_CLOSERS = "\"')\\]\u00bb\u201d\u2019"
_CJK_CLOSERS = "\u300d\u300f\uff09\u201d\u2019\u300b\u3009\u3011"
_BOUNDARY = re.compile(
    # Latin . ! ? (plus closing quotes) must be followed by whitespace, so "3.5",
    # "docshelf.types" and URLs never split.
    rf"(?P<latin>[.!?]+[{_CLOSERS}]*)(?=\s|\Z)"
    # CJK full stops need no space after them.
    rf"|[\u3002\uff01\uff1f\uff1b\uff61]+[{_CJK_CLOSERS}]*"
    # A blank line always ends a sentence.
    r"|(?:\r\n|\r|\n)[^\S\r\n]*(?:\r\n|\r|\n)"
)
# Lower-cased words that end with a dot without ending the sentence.
# fmt: off
_ABBREVIATIONS = frozenset({
    "e.g", "i.e", "cf", "vs", "al", "approx", "ca", "dr", "mr", "mrs", "ms", "mx", "prof", "sr",
    "jr", "st", "mt", "no", "nos", "nr", "vol", "vols", "fig", "figs", "eq", "eqs", "ch", "sec",
    "p", "pp", "ed", "eds", "inc", "ltd", "co", "corp", "dept", "est", "a.m", "p.m", "ph.d", "u.s",
    "u.k", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "z.b", "bzw", "ggf", "usw", "d.h",
})
# fmt: on
_OPENERS = "([{\"'\u201c\u2018\u00ab"
_MAX_ABBREVIATION = 8
# What a list item starts with before its dot: "2.", "a.", "iv." (only first on its line).
_LABEL = re.compile(r"(?:[0-9]{1,3}|[A-Za-z]|[ivxlcdm]{1,5}|[IVXLCDM]{1,5})")


def _is_abbreviation(text: str, dot: int, floor: int) -> bool:
    """True when the word before the dot at ``dot`` is a known abbreviation or an initial."""
    k = dot
    while k > floor and not text[k - 1].isspace():
        k -= 1
        if dot - k > _MAX_ABBREVIATION + 2:
            return False
    word = text[k:dot].lstrip(_OPENERS)
    if len(word) == 1 and word.isalpha() and word.isupper():
        return True  # an initial, as in "J. R. R. Tolkien"
    return word.lower() in _ABBREVIATIONS


def _is_label(text: str, dot: int, floor: int) -> bool:
    """True when the dot at ``dot`` ends a list label that opens its line ("2.  New features",
    "a.  Many changes"): the item's text follows, not a new sentence."""
    k = dot
    while k > floor and text[k - 1] not in " \t\r\n":
        k -= 1
        if dot - k > 5:
            return False
    line_start = k
    while line_start > floor and text[line_start - 1] in " \t":
        line_start -= 1
    if line_start > floor and text[line_start - 1] not in "\r\n":
        return False
    return _LABEL.fullmatch(text, k, dot) is not None


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Trimmed (start, end) spans of the sentences in ``text[start:end]``.

    The spans are in order, do not overlap and cover every non-whitespace
    character of the range.
    """
    stop = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    pos = start
    for m in _BOUNDARY.finditer(text, start, stop):
        latin = m.group("latin")
        if latin == "." and (_is_abbreviation(text, m.start(), start) or _is_label(text, m.start(), start)):
            continue
        s, e = trim_span(text, pos, m.end())
        if e > s:
            spans.append((s, e))
        pos = m.end()
    s, e = trim_span(text, pos, stop)
    if e > s:
        spans.append((s, e))
    return spans


def safe_cut(text: str, lo: int, cut: int) -> int:
    """Move ``cut`` back (not below ``lo + 1``) so that combining marks, variation
    selectors, skin tones and ZWJ emoji sequences are not split from their base."""
    c = cut
    while lo + 1 < c < len(text) and (
        unicodedata.category(text[c]) in ("Mn", "Mc", "Me")
        or "\ufe00" <= text[c] <= "\ufe0f"
        or "\U0001f3fb" <= text[c] <= "\U0001f3ff"
        or "\u200d" in (text[c], text[c - 1])
    ):
        c -= 1
    return c
