"""UTF-16 and UTF-32 without a byte-order mark, told apart from binary files by where their NULs fall.

Shared by the source walker (which skips files with NULs as binary) and the text decoder, so
both agree on what such a file is.
"""

from __future__ import annotations

import codecs
import unicodedata

__all__ = ["bomless_utf"]

_SAMPLE = 1 << 16
# Characters no text holds: C0 controls other than whitespace (NUL included), private use,
# unassigned and surrogates. Binary read as UTF-16 is full of them; a few in a real text are
# allowed for (a stray control character in a copied log).
_WHITESPACE = frozenset("\t\n\r\f\v")
_NOT_TEXT = frozenset({"Co", "Cn", "Cs"})
_MAX_NOT_TEXT = 0.01
# A few bytes prove nothing: `x\0\1y` reads as "x礁" in UTF-16. Text this short in these
# encodings is rare enough to be read as binary; eight ASCII characters' NULs are evidence.
_MIN_NULS = 8


def bomless_utf(data: bytes) -> str | None:
    """The codec of ``data`` when it is UTF-16 or UTF-32 text without a byte-order mark
    (``"utf-16-le"``, ...), judged from its first 64 KiB; None for anything else.

    Text in these encodings has NULs in the high bytes of its ASCII characters (markup, spaces,
    digits), so always at the same offsets modulo 2 or 4; a binary file has them anywhere, and
    decodes to controls and unassigned code points where they happen to line up.
    """
    sample = data[:_SAMPLE]
    if sample.count(0) < _MIN_NULS:
        return None
    for codec in _candidates(sample):
        if _reads_as_text(sample, codec):
            return codec
    return None


def _candidates(sample: bytes) -> list[str]:
    nuls = [sample[i::4].count(0) for i in range(4)]
    units = len(sample) // 4
    out = []
    # UTF-32: every character's top byte is zero, and all but the rare astral ones the next too
    if units and nuls[3] >= units and nuls[2] >= 0.9 * units:
        out.append("utf-32-le")
    if units and nuls[0] >= units and nuls[1] >= 0.9 * units:
        out.append("utf-32-be")
    even, odd = nuls[0] + nuls[2], nuls[1] + nuls[3]
    # UTF-16: ASCII puts its NUL in the high byte; a NUL in the low byte takes U+0100, U+0400,
    # U+4E00 ..., which a text seldom holds.
    if odd and even <= odd / 20:
        out.append("utf-16-le")
    if even and odd <= even / 20:
        out.append("utf-16-be")
    return out


def _reads_as_text(sample: bytes, codec: str) -> bool:
    # the sample may end inside a character: an incremental decoder keeps the tail back
    try:
        text = codecs.getincrementaldecoder(codec)().decode(sample, final=False)
    except UnicodeDecodeError:
        return False
    if not text:
        return False
    bad = sum(
        1
        for ch in text
        if (ch < " " and ch not in _WHITESPACE) or (ch > "\x7f" and unicodedata.category(ch) in _NOT_TEXT)
    )
    return "\x00" not in text and bad <= _MAX_NOT_TEXT * len(text)
