"""How odd a decoded text looks: letters no one language writes together, symbols inside words.

charset-normalizer rates readings of legacy 8-bit bytes by letter frequencies, and for short or
mid-sized files many readings tie or win by a hair: French cp1252 came out as Baltic cp775
("comitķ"), Turkish cp1254 as cp1252 ("çalýþma"), Hungarian cp1250 as cp1252 ("tûrõ"). A wrong
reading of such bytes nearly always yields letters that no single alphabet holds together, a
capital inside a lower-case word, or a symbol between two letters; the right one rarely does.
"""

from __future__ import annotations

import functools
import itertools
import unicodedata
from collections import Counter

__all__ = ["oddness"]

# The letters beyond ASCII each Latin-script language writes (lower case). A text's accented
# letters should all come from one of these; a few loan words cost a few, a misreading many.
_ALPHABETS = tuple(
    frozenset(letters)
    for letters in (
        "äöüß",  # German
        "àâæçéèêëîïôœùûüÿ",  # French
        "áéíñóúü",  # Spanish
        "áâãàçéêíóôõú",  # Portuguese
        "àèéìíîòóùú",  # Italian
        "àçèéíïòóúü",  # Catalan
        "áéëïóöüèàäíú",  # Dutch, Afrikaans
        "æøåéèêóòôü",  # Danish, Norwegian
        "åäöéü",  # Swedish
        "äöåšž",  # Finnish
        "áðéíóúýþæö",  # Icelandic
        "áðíóúýæø",  # Faroese
        "çğıöşüâîû",  # Turkish
        "çəğıöşü",  # Azerbaijani
        "áéíóöőúüű",  # Hungarian
        "ąćęłńóśźż",  # Polish
        "áčďéěíňóřšťúůýž",  # Czech
        "áäčďéíĺľňóôŕšťúýž",  # Slovak
        "čćđšž",  # Slovenian, Croatian, Bosnian, Serbian Latin
        "ăâîșțşţ",  # Romanian
        "ąčęėįšųūž",  # Lithuanian
        "āčēģīķļņšūž",  # Latvian
        "äöõüšž",  # Estonian
        "áéíóú",  # Irish
        "âêîôûŵŷáéíóúàèìòùäëïöüẅÿ",  # Welsh
        "ċġħżàèìòù",  # Maltese
        "çë",  # Albanian
        "ĉĝĥĵŝŭ",  # Esperanto
    )
)
_PAIRS = tuple(a | b for a, b in itertools.combinations_with_replacement(_ALPHABETS, 2))
_SYMBOL = frozenset({"Sm", "Sc", "Sk", "So", "No"})
_UNUSED = frozenset({"Cc", "Co", "Cn"})
# Quote marks and other punctuation inside a word are odd too ("»" of hp-roman8 in "ya±»yorum",
# "jeś" in Latin-2 read as cp1252 "je¶li"); apostrophes, Catalan's "l·l" and the full-width
# punctuation of scripts written without spaces ("晴れてきました。私たち") are not.
_PUNCTUATION = frozenset({"Pi", "Pf", "Po"})
_IN_WORDS = frozenset("\u2018\u2019\u00b7")
_TONE_BEARERS = frozenset("aeiouyâêôơưă")
_SAMPLE = 1 << 16


def oddness(text: str, encoding: str) -> tuple[int, int]:
    """How odd ``text`` (its first 64 KiB) looks read as ``encoding``, least first: the characters
    that look like a misreading of its bytes, then the accented letters outside the one alphabet
    that holds most of them."""
    sample = text[:_SAMPLE]
    odd = 0
    accented: Counter[str] = Counter()
    word: set[str] = set()  # the accented letters of the word being read
    prev = ""
    gap = 0  # symbols since the last letter, while inside a word
    for ch in sample:
        if ch.isalpha():
            if ch > "\x7f":
                lower = ch.lower()[0]  # "İ" lowers to "i" + a combining dot
                if lower > "\x7f" and _latin(ch):
                    accented[lower] += 1
                    word.add(lower)
                elif not _latin(ch) and prev.isascii() and prev.isalpha():
                    odd += 1  # another script inside a Latin word ("crиme")
            if ch.isupper() and prev.islower():
                odd += 1  # a capital inside a word ("crĶme", KOI8 read as cp1251)
            odd += gap  # symbols between two letters ("br¹lée", "ya˛˝yorum")
            odd += prev > "\x7f" and unicodedata.category(prev) == "No"  # "¾htust"; "m²" is fine
            gap = 0
            prev = ch
            continue
        if ch > "\x7f":
            kind = unicodedata.category(ch)
            if kind == "Mn":
                odd += _needless_mark(prev, ch, encoding)
                continue  # a mark belongs to its letter
            stray = kind in _SYMBOL or (kind in _PUNCTUATION and ch not in _IN_WORDS and not _wide(ch))
            if stray and (prev.isalpha() or gap):
                gap += 1
                prev = ch
                continue
            odd += kind in _UNUSED  # C1 controls, private use, unassigned: never in a text
        elif ch < " " and ch not in "\t\n\r\f\v":
            odd += 1
        elif "0" <= ch <= "9" and prev > "\x7f" and prev.isalpha():
            odd += 1  # an accented letter glued to a number: "Ł5" is cp1252's "£5" read as cp1250
        if word:
            odd += not _fits(frozenset(word))  # one word, one language
            word.clear()
        gap = 0
        prev = ch
    if word:
        odd += not _fits(frozenset(word))
    if not accented:
        return odd, 0
    # A text may mix two languages (Spanish and Portuguese lines), hardly three; one is likelier.
    total = sum(accented.values())
    single, pair = (
        min(total - sum(n for ch, n in accented.items() if ch in alphabet) for alphabet in alphabets)
        for alphabets in (_ALPHABETS, _PAIRS)
    )
    return odd + pair, single


@functools.lru_cache(maxsize=4096)
def _fits(letters: frozenset[str]) -> bool:
    return any(letters <= alphabet for alphabet in _ALPHABETS)


def _needless_mark(letter: str, mark: str, encoding: str) -> int:
    """1 when ``letter`` + ``mark`` is not how a file in ``encoding`` writes it. The 8-bit code
    pages with marks (Vietnamese cp1258) put a tone mark on a vowel, and only where the code page
    has no whole letter for it: "coś" is Italian "così" read as cp1258."""
    if letter.lower() not in _TONE_BEARERS:
        return 1
    whole = unicodedata.normalize("NFC", letter + mark)
    if len(whole) != 1:
        return 0
    try:
        whole.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return 0
    return 1


def _wide(ch: str) -> bool:
    # Chinese and Japanese write no spaces, so "、" and "。" stand between two letters
    return unicodedata.east_asian_width(ch) in "WF"


def _latin(ch: str) -> bool:
    return unicodedata.name(ch, "").startswith("LATIN")
