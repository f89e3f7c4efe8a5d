"""Unicode character classes for script-aware tokenisation (regex fragments, constants only).

Python's ``re`` has no ``\\p{Script}`` support, so the ranges are spelled out here. They
only decide where runs start and end; characters outside every class are separators.
"""

from __future__ import annotations

import re

__all__ = ["COMPOUND_RE", "G_HANGUL", "G_LATIN", "G_NUM", "G_OTHER", "G_SEA", "HYPHENATED_RE", "TOKEN_RE"]

# Combining marks (general category M*, Unicode 14), generated with
#   [c for c in range(0x110000) if unicodedata.category(chr(c))[0] == "M"]
# collapsed into ranges. \w does not match marks, so without them decomposed text
# ("Ha\u0308user", macOS NFD file names) and Indic/Thai vowel signs would split words.
MARKS = (
    r"\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1-\u05c2\u05c4-\u05c5\u05c7"
    r"\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7-\u06e8\u06ea-\u06ed"
    r"\u0711\u0730-\u074a\u07a6-\u07b0\u07eb-\u07f3\u07fd\u0816-\u0819\u081b-\u0823"
    r"\u0825-\u0827\u0829-\u082d\u0859-\u085b\u0898-\u089f\u08ca-\u08e1\u08e3-\u0903"
    r"\u093a-\u093c\u093e-\u094f\u0951-\u0957\u0962-\u0963\u0981-\u0983\u09bc\u09be-\u09c4"
    r"\u09c7-\u09c8\u09cb-\u09cd\u09d7\u09e2-\u09e3\u09fe\u0a01-\u0a03\u0a3c\u0a3e-\u0a42"
    r"\u0a47-\u0a48\u0a4b-\u0a4d\u0a51\u0a70-\u0a71\u0a75\u0a81-\u0a83\u0abc\u0abe-\u0ac5"
    r"\u0ac7-\u0ac9\u0acb-\u0acd\u0ae2-\u0ae3\u0afa-\u0aff\u0b01-\u0b03\u0b3c\u0b3e-\u0b44"
    r"\u0b47-\u0b48\u0b4b-\u0b4d\u0b55-\u0b57\u0b62-\u0b63\u0b82\u0bbe-\u0bc2\u0bc6-\u0bc8"
    r"\u0bca-\u0bcd\u0bd7\u0c00-\u0c04\u0c3c\u0c3e-\u0c44\u0c46-\u0c48\u0c4a-\u0c4d"
    r"\u0c55-\u0c56\u0c62-\u0c63\u0c81-\u0c83\u0cbc\u0cbe-\u0cc4\u0cc6-\u0cc8\u0cca-\u0ccd"
    r"\u0cd5-\u0cd6\u0ce2-\u0ce3\u0d00-\u0d03\u0d3b-\u0d3c\u0d3e-\u0d44\u0d46-\u0d48"
    r"\u0d4a-\u0d4d\u0d57\u0d62-\u0d63\u0d81-\u0d83\u0dca\u0dcf-\u0dd4\u0dd6\u0dd8-\u0ddf"
    r"\u0df2-\u0df3\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ecd"
    r"\u0f18-\u0f19\u0f35\u0f37\u0f39\u0f3e-\u0f3f\u0f71-\u0f84\u0f86-\u0f87\u0f8d-\u0f97"
    r"\u0f99-\u0fbc\u0fc6\u102b-\u103e\u1056-\u1059\u105e-\u1060\u1062-\u1064\u1067-\u106d"
    r"\u1071-\u1074\u1082-\u108d\u108f\u109a-\u109d\u135d-\u135f\u1712-\u1715\u1732-\u1734"
    r"\u1752-\u1753\u1772-\u1773\u17b4-\u17d3\u17dd\u180b-\u180d\u180f\u1885-\u1886\u18a9"
    r"\u1920-\u192b\u1930-\u193b\u1a17-\u1a1b\u1a55-\u1a5e\u1a60-\u1a7c\u1a7f\u1ab0-\u1ace"
    r"\u1b00-\u1b04\u1b34-\u1b44\u1b6b-\u1b73\u1b80-\u1b82\u1ba1-\u1bad\u1be6-\u1bf3"
    r"\u1c24-\u1c37\u1cd0-\u1cd2\u1cd4-\u1ce8\u1ced\u1cf4\u1cf7-\u1cf9\u1dc0-\u1dff"
    r"\u20d0-\u20f0\u2cef-\u2cf1\u2d7f\u2de0-\u2dff\u302a-\u302f\u3099-\u309a\ua66f-\ua672"
    r"\ua674-\ua67d\ua69e-\ua69f\ua6f0-\ua6f1\ua802\ua806\ua80b\ua823-\ua827\ua82c"
    r"\ua880-\ua881\ua8b4-\ua8c5\ua8e0-\ua8f1\ua8ff\ua926-\ua92d\ua947-\ua953\ua980-\ua983"
    r"\ua9b3-\ua9c0\ua9e5\uaa29-\uaa36\uaa43\uaa4c-\uaa4d\uaa7b-\uaa7d\uaab0\uaab2-\uaab4"
    r"\uaab7-\uaab8\uaabe-\uaabf\uaac1\uaaeb-\uaaef\uaaf5-\uaaf6\uabe3-\uabea\uabec-\uabed"
    r"\ufb1e\ufe00-\ufe0f\ufe20-\ufe2f\U000101fd\U000102e0\U00010376-\U0001037a"
    r"\U00010a01-\U00010a03\U00010a05-\U00010a06\U00010a0c-\U00010a0f\U00010a38-\U00010a3a"
    r"\U00010a3f\U00010ae5-\U00010ae6\U00010d24-\U00010d27\U00010eab-\U00010eac"
    r"\U00010f46-\U00010f50\U00010f82-\U00010f85\U00011000-\U00011002\U00011038-\U00011046"
    r"\U00011070\U00011073-\U00011074\U0001107f-\U00011082\U000110b0-\U000110ba\U000110c2"
    r"\U00011100-\U00011102\U00011127-\U00011134\U00011145-\U00011146\U00011173"
    r"\U00011180-\U00011182\U000111b3-\U000111c0\U000111c9-\U000111cc\U000111ce-\U000111cf"
    r"\U0001122c-\U00011237\U0001123e\U000112df-\U000112ea\U00011300-\U00011303"
    r"\U0001133b-\U0001133c\U0001133e-\U00011344\U00011347-\U00011348\U0001134b-\U0001134d"
    r"\U00011357\U00011362-\U00011363\U00011366-\U0001136c\U00011370-\U00011374"
    r"\U00011435-\U00011446\U0001145e\U000114b0-\U000114c3\U000115af-\U000115b5"
    r"\U000115b8-\U000115c0\U000115dc-\U000115dd\U00011630-\U00011640\U000116ab-\U000116b7"
    r"\U0001171d-\U0001172b\U0001182c-\U0001183a\U00011930-\U00011935\U00011937-\U00011938"
    r"\U0001193b-\U0001193e\U00011940\U00011942-\U00011943\U000119d1-\U000119d7"
    r"\U000119da-\U000119e0\U000119e4\U00011a01-\U00011a0a\U00011a33-\U00011a39"
    r"\U00011a3b-\U00011a3e\U00011a47\U00011a51-\U00011a5b\U00011a8a-\U00011a99"
    r"\U00011c2f-\U00011c36\U00011c38-\U00011c3f\U00011c92-\U00011ca7\U00011ca9-\U00011cb6"
    r"\U00011d31-\U00011d36\U00011d3a\U00011d3c-\U00011d3d\U00011d3f-\U00011d45\U00011d47"
    r"\U00011d8a-\U00011d8e\U00011d90-\U00011d91\U00011d93-\U00011d97\U00011ef3-\U00011ef6"
    r"\U00016af0-\U00016af4\U00016b30-\U00016b36\U00016f4f\U00016f51-\U00016f87"
    r"\U00016f8f-\U00016f92\U00016fe4\U00016ff0-\U00016ff1\U0001bc9d-\U0001bc9e"
    r"\U0001cf00-\U0001cf2d\U0001cf30-\U0001cf46\U0001d165-\U0001d169\U0001d16d-\U0001d172"
    r"\U0001d17b-\U0001d182\U0001d185-\U0001d18b\U0001d1aa-\U0001d1ad\U0001d242-\U0001d244"
    r"\U0001da00-\U0001da36\U0001da3b-\U0001da6c\U0001da75\U0001da84\U0001da9b-\U0001da9f"
    r"\U0001daa1-\U0001daaf\U0001e000-\U0001e006\U0001e008-\U0001e018\U0001e01b-\U0001e021"
    r"\U0001e023-\U0001e024\U0001e026-\U0001e02a\U0001e130-\U0001e136\U0001e2ae"
    r"\U0001e2ec-\U0001e2ef\U0001e8d0-\U0001e8d6\U0001e944-\U0001e94a\U000e0100-\U000e01ef"
)

# Latin letters outside ASCII: Latin-1, Extended-A/B, IPA, Extended Additional/C/D/E,
# ligatures ("ﬁ") and fullwidth forms (NFKC folds the last two to ASCII).
LATIN_EXTRA = (
    r"\u00aa\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02af\u1d00-\u1dbf\u1e00-\u1eff"
    r"\u2c60-\u2c7f\ua722-\ua788\ua78b-\ua7ff\uab30-\uab5a\uab5c-\uab6f"
    r"\ufb00-\ufb06\uff21-\uff3a\uff41-\uff5a"
)
# Han ideographs, including iteration/zero marks (々 〇 〻), Hangzhou numerals,
# compatibility ideographs and the supplementary-plane extensions.
HAN = (
    r"\u3005\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    r"\U00020000-\U0003134f"
)
# Hiragana and katakana are separate scripts: the boundary between them is usually a
# word boundary ("ポケモンの" -> "ポケモン" + "の"), so no bigram should span it.
# Both include the halfwidth/small forms; "ー" (prolonged sound mark) sits in katakana.
HIRAGANA = r"\u3041-\u3096\u309d-\u309f"
KATAKANA = r"\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9d"
# Marks that may follow kana: combining (han)dakuten and their halfwidth forms.
KANA_MARKS = r"\u3099\u309a\uff9e\uff9f"
# Hangul syllables, conjoining jamo, compatibility and halfwidth jamo.
HANGUL = r"\u1100-\u11ff\u3131-\u318e\ua960-\ua97c\uac00-\ud7a3\ud7b0-\ud7fb\uffa0-\uffdc"


# Invisible characters that sit inside words and must not split them: the soft hyphen (HTML
# &shy;, optional hyphens in word processors: "docu\u00adment"), the zero-width non-joiner and
# joiner (inside Persian words, Indic ligature control), the word joiner
# and U+FEFF. The analyzer drops them from its terms (_fold.py, fold).
JOINERS = "\u00ad\u200c\u200d\u2060\ufeff"


def _word(cls: str) -> str:
    """The pattern of a word of letters in ``cls``: marks (and JOINERS) may follow any letter, an
    apostrophe inside stays inside ("don't", "o'neill": Snowball English strips a possessive
    "'s"), and hyphens split (whole hyphenated words lost 0.003 nDCG@10 on scifact train)."""
    unit = rf"(?:{cls}+[{MARKS}{JOINERS}]*)+"
    return rf"{unit}(?:['\u2019]{unit})*"


# Thai, Lao, Myanmar (and its extensions), Khmer (and its symbols): written without spaces
# between words, so their runs go to a dictionary word breaker (ICU) instead of splitting on
# spaces. Their combining marks lie inside these blocks.
SEA = r"\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u19e0-\u19ff\ua9e0-\ua9ff\uaa60-\uaa7f"

_CJK = HAN + HIRAGANA + KATAKANA + HANGUL
# One alternative per run kind; a match's ``lastindex`` says which (G_* below).
# Digits are their own runs ("p53" -> "p", "53"; "2015年" -> "2015", "年"): measured on
# scifact, splitting beat keeping letter-digit mixes whole (nDCG@10 0.690 vs 0.680).
TOKEN_RE = re.compile(
    "|".join(
        f"({p})"
        for p in (
            _word(rf"[A-Za-z{LATIN_EXTRA}]"),
            rf"[{SEA}]+",
            _word(rf"[^\W\d_A-Za-z{LATIN_EXTRA}{_CJK}{SEA}]"),
            r"\d+",
            rf"[{HAN}]+",
            rf"(?:[{HIRAGANA}][{KANA_MARKS}]*)+",
            rf"(?:[{KATAKANA}][{KANA_MARKS}]*)+",
            rf"[{HANGUL}]+",
        )
    )
)
G_LATIN, G_SEA, G_OTHER, G_NUM = 1, 2, 3, 4  # groups 5-7: Han, hiragana, katakana; 8: Hangul
G_HANGUL = 8

# Identifiers, versions and codes, kept whole next to their parts: "0.110.0", "v1.2.3",
# "snake_case", "x86_64", "config.yaml", "p53". Letters and digits joined by . or _ (each
# followed by more letters or digits, so a sentence's final period stays out), or letters
# and digits mixed in one word. On scifact train (keyword nDCG@10) whole mixed words gain
# 0.012; whole hyphenated words ("IL-6", "well-known") lose 0.003, so hyphens only split.
_ALNUM = rf"[A-Za-z0-9{LATIN_EXTRA}]"
COMPOUND_RE = re.compile(
    rf"(?<![\w.])(?:{_ALNUM}+(?:[._]{_ALNUM}+)+|[A-Za-z]+\d{_ALNUM}*|\d+[A-Za-z]{_ALNUM}*)"
)
# A word ending in "++" or "#" (C++, C#, F#, g++, Notepad++), kept whole the same way: without it
# "C++ templates" and "C# generics" both searched for the letter c. Its own pattern, run only on
# text holding a "+" or "#", so other text pays nothing for it.
SUFFIXED_RE = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9]*(?:\+\+|#)(?![\w+#])")
# Latin words joined by hyphens ("up-regulated", "e-mail", "COVID-19"): a passage also gets the
# closed spelling ("upregulated"), which queries type as often as the hyphenated one.
HYPHENATED_RE = re.compile(
    rf"(?<![\w\-\u2010])[A-Za-z{LATIN_EXTRA}]+(?:[\-\u2010](?:[A-Za-z{LATIN_EXTRA}]+|\d+))+(?![\w\-\u2010])"
)
