"""Which writing systems a text is in, and how many words of each: what the index records of
its scripts, and what the search's note on unrelated hits compares a query against."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

__all__ = [
    "KNOWN_SHARE",
    "decode_scripts",
    "encode_scripts",
    "known_scripts",
    "script_of",
    "script_words",
    "scripts_of",
]

# a script is "known" to an index from this share of its words on: measured on xquad-zh and
# cmrc2018 (Latin names are 1.6-1.8 % of the words) and the sample corpus (CJK + Hangul 25 %)
KNOWN_SHARE = 0.05
_LETTERS = re.compile(r"[^\W\d_]+")


def script_of(ch: str) -> str | None:
    """The writing system of a letter as the first word of its Unicode name (LATIN, CYRILLIC,
    ...), Han and kana both CJK (they share bigram matching); None for what is not a letter."""
    if not ch.isalpha():
        return None
    if ch.isascii():
        return "LATIN"
    name = unicodedata.name(ch, "")
    word = name.split(" ", 1)[0] if name else ""
    if word in ("CJK", "HIRAGANA", "KATAKANA", "IDEOGRAPHIC"):
        return "CJK"  # Han and kana share bigram matching
    return word or None


def scripts_of(texts: Iterable[str]) -> set[str]:
    """The writing systems (LATIN, CJK, CYRILLIC, HANGUL, ...) of the letters in ``texts``."""
    chars: set[str] = set()
    for text in texts:
        chars.update(text)
    return {s for s in map(script_of, chars) if s}


def script_words(texts: Iterable[str], into: dict[str, float] | None = None) -> dict[str, float]:
    """About how many words of each writing system ``texts`` hold (a CJK run of n characters
    counts n / 1.5 words), so a few Latin names in Chinese text stay a small share."""
    words = {} if into is None else into
    for text in texts:
        for run in _LETTERS.findall(text):
            script = script_of(run[0])
            if script:
                words[script] = words.get(script, 0.0) + (len(run) / 1.5 if script == "CJK" else 1.0)
    return words


def known_scripts(words: Mapping[str, float], share: float = KNOWN_SHARE) -> set[str]:
    """The scripts that make up at least ``share`` of an index's words."""
    total = sum(words.values())
    return {s for s, n in words.items() if total and n >= share * total}


def encode_scripts(words: Mapping[str, float]) -> str:
    """``script_words`` counts as stored in the index's meta ("CJK:120,LATIN:3400")."""
    return ",".join(f"{s}:{round(n)}" for s, n in sorted(words.items()))


def decode_scripts(text: str | None) -> dict[str, float]:
    """``encode_scripts`` read back (the language counts use the same form); {} for none."""
    out: dict[str, float] = {}
    for part in (text or "").split(","):
        name, _, count = part.partition(":")
        if name:
            out[name] = out.get(name, 0.0) + float(count or 1)
    return out
