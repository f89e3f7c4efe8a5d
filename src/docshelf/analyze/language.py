"""Which language (or script) a text is in: enough to tell when keywords cannot match."""

from __future__ import annotations

import re

from docshelf.analyze._scripts import HAN, HANGUL, HIRAGANA, KATAKANA

__all__ = ["language_of", "script_of"]

_HAN = re.compile(f"[{HAN}]")
_KANA = re.compile(f"[{HIRAGANA}{KATAKANA}]")
_HANGUL = re.compile(f"[{HANGUL}]")
_LETTER = re.compile(r"[^\W\d_]")


def script_of(text: str) -> str:
    """Dominant writing system: "han", "kana" (Japanese), "hangul" or "alphabetic" (Latin, ...)."""
    sample = text[:2000]
    han, kana, hangul = (len(r.findall(sample)) for r in (_HAN, _KANA, _HANGUL))
    alphabetic = len(_LETTER.findall(sample)) - han - kana - hangul
    counts = {"han": han + kana, "hangul": hangul, "alphabetic": alphabetic}
    best = max(counts, key=counts.__getitem__)
    # Japanese writes kana between its kanji; Chinese has none
    return "kana" if best == "han" and kana * 5 >= han and kana else best


def language_of(text: str, detect: object = None) -> str:
    """Script, refined to a language for alphabetic text when ``detect`` (text -> name) is given."""
    script = script_of(text)
    if script == "alphabetic" and callable(detect):
        return str(detect(text))
    return script
