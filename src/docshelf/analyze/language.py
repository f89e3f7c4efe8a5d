"""Which language (or script) a text is in: enough to tell when keywords cannot match."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from docshelf.analyze._scripts import HAN, HANGUL, HIRAGANA, KATAKANA

__all__ = ["count_language", "language_of", "same_language", "script_of"]

_HAN = re.compile(f"[{HAN}]")
_KANA = re.compile(f"[{HIRAGANA}{KATAKANA}]")
_HANGUL = re.compile(f"[{HANGUL}]")
_LETTER = re.compile(r"[^\W\d_]")


def script_of(text: str) -> str:
    """Dominant writing system: "han", "kana" (Japanese), "hangul" or "alphabetic" (Latin, ...);
    "none" for text without letters ("422", "0.110.0"), which was counted as Chinese."""
    sample = text[:2000]
    han, kana, hangul = (len(r.findall(sample)) for r in (_HAN, _KANA, _HANGUL))
    letters = len(_LETTER.findall(sample))
    if not letters:
        return "none"
    alphabetic = letters - han - kana - hangul
    counts = {"han": han + kana, "hangul": hangul, "alphabetic": alphabetic}
    best = max(counts, key=counts.__getitem__)
    # Japanese writes kana between its kanji; Chinese has none
    return "kana" if best == "han" and kana * 5 >= han and kana else best


def language_of(text: str, detect: Callable[[str], str | None] | None = None) -> str:
    """Script, refined to a language for alphabetic text when ``detect`` (text -> name) tells one.

    Alphabetic text whose language ``detect`` cannot tell stays "alphabetic".
    """
    script = script_of(text)
    if script == "alphabetic" and detect is not None:
        return detect(text[:2000]) or script
    return script


def same_language(a: str, b: str) -> bool:
    """Whether two ``language_of`` answers may name one language ("alphabetic" = not told; "none":
    no letters, so no language to differ in)."""
    if a == b or "none" in (a, b):
        return True
    if a in _CJK or b in _CJK:
        return False
    return "alphabetic" in (a, b)


_CJK = frozenset({"han", "kana", "hangul"})


def count_language(detect: Callable[[str], str | None], texts: Sequence[str], into: dict[str, float]) -> None:
    """Add a document's words to the count of the language its text is stemmed in (the first
    2,000 characters decide, as for a chunk); a text of no told language counts nowhere."""
    parts: list[str] = []
    size = 0
    for text in texts:  # a 20 MB file has thousands of chunks: only the first ones are joined
        parts.append(text)
        size += len(text) + 1
        if size >= 2000:
            break
    sample = "\n".join(parts)[:2000]
    lang = detect(sample)
    if lang is not None:
        into[lang] = into.get(lang, 0.0) + sum(len(t.split()) for t in texts)
