"""Whether text a PDF library extracted is mojibake rather than the page's words.

A PDF font without a usable ToUnicode map leaves the extractor guessing: PDFium takes a glyph's
code for its character, so Russian set in a Korean font (whose Cyrillic glyphs sit at codes
0xAC00 and up) comes out as Hangul syllables. Such text looks like a script, but not like
anything written in it: a few dozen letters from one narrow stretch of a script that spans
thousands, syllables outside the set every Korean text uses; or it is mostly private-use and
replacement characters. (Latin mojibake, "ÆüËÜ¸ì", is left alone: UML names, formulas and
Vietnamese look as odd to a cheap test.)
"""

from __future__ import annotations

import re

__all__ = ["garbled"]

_MIN_LETTERS = 20  # fewer say too little either way
# A stretch of Hangul or Han narrower than this holds one initial consonant's syllables (588
# of them) or a few hundred ideographs; prose of 20 letters never keeps to one.
_NARROW_SPAN = 600
_MIN_DISTINCT = 12
_MAX_RARE_HANGUL = 0.1  # syllables outside KS X 1001's 2,350; real text has next to none
_MAX_NOT_TEXT = 0.1
# (regular expressions: a long PDF's pages are checked one by one, character loops cost)
_LETTER = re.compile(r"[^\W\d_]")
_NOT_TEXT = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff\ufffd-\uffff]")  # private use, not characters
_SUSPECT = re.compile(
    "[\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\ue000-\uf8ff\U000f0000-\U0010ffff\ufffd-\uffff]"
)
_HANGUL = re.compile("[\uac00-\ud7a3]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")


def garbled(text: str) -> bool:
    """True when ``text`` looks like mojibake (see the module's notes)."""
    if not _SUSPECT.search(text):
        return False
    letters = len(_LETTER.findall(text))
    not_text = len(_NOT_TEXT.findall(text))
    if letters + not_text < _MIN_LETTERS:
        return False
    if not_text > _MAX_NOT_TEXT * (letters + not_text):
        return True
    hangul = [ord(ch) for ch in _HANGUL.findall(text)]
    han = [ord(ch) for ch in _HAN.findall(text)]
    for codes in (hangul, han):
        # a dozen different letters, not a word repeated ("日本" in every row of a table)
        if len(set(codes)) >= _MIN_DISTINCT and max(codes) - min(codes) < _NARROW_SPAN:
            return True
    rare = sum(map(_rare_syllable, hangul))
    return len(hangul) >= _MIN_LETTERS and rare > _MAX_RARE_HANGUL * len(hangul)


def _rare_syllable(code: int) -> bool:
    try:
        chr(code).encode("euc_kr")
    except UnicodeEncodeError:
        return True
    return False
