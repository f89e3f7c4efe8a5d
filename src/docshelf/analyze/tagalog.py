"""A light Tagalog stemmer: Snowball has none, and Tagalog words carry most of their grammar in affixes.

One casefolded word at a time: enclitics and spelling variants first ("siya'y" -> "siya", "sapagka't"
-> "sapagkat", Dios/Diyos, Fariseo/Pariseo, "ng̃" -> "ng"), then the linker -ng, one prefix (longest
first: "nagsi-" before "nag-"), the infix -um-/-in-, a repeated first syllable ("sinasabi" -> "sabi")
and one suffix (-an/-in, -han/-hin). Each step leaves a root of four letters or more, as most have.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

__all__ = ["TagalogStemmer", "stem"]

_VOWELS = frozenset("aeiou")
# Verbal and nominal prefixes, compounds of them included (nagsi- = nag- + plural -si-); nasal
# prefixes (mang-, pang-) only strip, their sound change on the root is left alone.
_PREFIX_LIST = """nagsipag magsipag nagsipa magsipa nagsi magsi nangagsi mangagsi nangag mangag
nagpaka magpaka nagpa magpa nakipag makipag nakapag makapag nakapa makapa naka maka nagka magka
ipinag ipag ipina ipa ikina ika pinag pinaka pagka pagpa pag nag mag napa mapa na ma pa i ka taga
mang man mam nang nan nam pang pan pam"""
_PREFIXES = tuple(sorted(set(_PREFIX_LIST.split()), key=len, reverse=True))
_SUFFIXES = ("han", "hin", "nan", "nin", "an", "in")
_ROOT = 4
# A glide before a vowel is written three ways: Dios, Diyos; kanya, kaniya; pwede, puwede.
_GLIDE_Y = re.compile(r"(?:(?<=[b-df-hj-np-tv-z])|i)y(?=[aeou])")
_GLIDE_W = re.compile(r"(?:(?<=[b-df-hj-np-tv-z])|u)w(?=[aeio])")
# Letters outside the Abakada, as Tagalog respells Spanish loans (Cristo/Kristo, cruz/krus,
# justicia/hustisya, coche/kotse): older and newer texts spell the same word both ways.
_LOAN = re.compile(r"ch|qu|c[ei]|[cfjqvxz]")
_NATIVE = {"ch": "ts", "qu": "k", "ce": "se", "ci": "si", "c": "k", "f": "p", "j": "h", "q": "k",
           "v": "b", "x": "ks", "z": "s"}  # fmt: skip


def _unredup(word: str) -> str:
    """Drop a repeated first syllable: CV-CV... ("sasabi") or V-V... ("aalis")."""
    if len(word) - 2 >= _ROOT and word[0] not in _VOWELS and word[1] in _VOWELS and word[:2] == word[2:4]:
        return word[2:]
    if len(word) - 1 >= _ROOT and word[0] in _VOWELS and word[0] == word[1]:
        return word[1:]
    return word


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The stem of one casefolded Tagalog word; words of other letters come back as they are."""
    word = word.replace("g\u0303", "g").replace("ñ", "ny")  # 19th-century "ng̃" for "ng"; Niño/Ninyo
    if "'" in word:
        # 'y is a contracted "ay" (ako'y), joined 't the old spelling of -t (sapagka't, nguni't)
        head, _, tail = word.partition("'")
        word = head if tail == "y" else head + tail
    if not (word.isascii() and word.isalpha()):
        return word
    word = _LOAN.sub(lambda m: _NATIVE[m.group()], word)
    word = _GLIDE_W.sub("u", _GLIDE_Y.sub("i", word))
    if len(word) - 2 >= _ROOT and word.endswith("ng") and word[-3] in _VOWELS:
        word = word[:-2]  # the linker after a vowel: "dakilang" (dakila + -ng)
    if word[:2] in ("um", "in") and word[2:3] in _VOWELS and len(word) - 2 >= _ROOT:
        word = word[2:]  # the infix before a vowel-initial root: umalis, inalis -> alis
    for prefix in _PREFIXES:
        if word.startswith(prefix) and len(word) - len(prefix) >= _ROOT:
            word = _unredup(word[len(prefix) :])
            break
    if len(word) - 2 >= _ROOT and word[0] not in _VOWELS and word[1:3] in ("um", "in") and word[3] in _VOWELS:
        word = _unredup(word[0] + word[3:])
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _ROOT:
            return word[: -len(suffix)]
    return word


class TagalogStemmer:
    """``stemWords`` like a PyStemmer ``Stemmer``, so the analyzer uses it the same way."""

    def stemWords(self, words: Sequence[str]) -> list[str]:
        """Each word's stem (``stem``), in order."""
        return [stem(w) for w in words]
