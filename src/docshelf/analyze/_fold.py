"""Folding: what two spellings of one word share (case, width, joiners, marks), per term."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from docshelf.analyze._scripts import JOINERS

__all__ = ["fold", "unaccented"]

# One apostrophe; JOINERS and Hebrew points (U+0591-U+05C7 but for the maqaf and the punctuation
# among them) deleted.
_FOLD_TABLE = {
    0x2019: "'",
    **dict.fromkeys(map(ord, JOINERS)),
    **dict.fromkeys(c for c in range(0x0591, 0x05C8) if c not in (0x05BE, 0x05C0, 0x05C3, 0x05C6)),
}


def fold(raw: str) -> str:
    """NFKC + casefold (+ NFKC again, as casefolding can denormalise); one apostrophe.

    The capital dotted I (U+0130, Turkish and Azerbaijani) becomes a plain i first: casefolded it is
    i + a combining dot, a term no query typed with a plain i could meet (`İstanbul`). Invisible
    joiners inside a word (the soft hyphen of `docu\u00adment`) and Hebrew vowel points and
    cantillation marks, which most Hebrew text and every typed query leave out, are dropped."""
    plain = unicodedata.normalize("NFKC", raw).replace("\u0130", "i")
    folded = unicodedata.normalize("NFKC", plain.casefold())
    return folded.translate(_FOLD_TABLE)


# Latin letters that no decomposition takes apart, as a keyboard without them types them.
_PLAIN_LETTERS = str.maketrans({"ø": "o", "ł": "l", "đ": "d", "ð": "d", "ı": "i", "ħ": "h", "ŧ": "t",
                                "æ": "ae", "œ": "oe", "þ": "th"})  # fmt: skip


@lru_cache(maxsize=1 << 16)  # a language has few accented words, each seen many times
def unaccented(word: str) -> str | None:
    """A folded Latin word as typed without its accents (`résumé` -> `resume`, `şifre` -> `sifre`,
    `łódź` -> `lodz`); None when it has none. German ü stays a u (the German stemmer does the same)."""
    if word.isascii():
        return None
    bare = "".join(ch for ch in unicodedata.normalize("NFD", word) if not unicodedata.combining(ch))
    bare = bare.translate(_PLAIN_LETTERS)
    return bare if bare != word and bare.isascii() else None
