"""Turn file bytes into text without changing it, so offsets map back to the file."""

from __future__ import annotations

import codecs
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from docshelf.bomless import bomless_utf
from docshelf.errors import ParseError
from docshelf.parse._alphabets import oddness

if TYPE_CHECKING:
    from charset_normalizer import CharsetMatch

__all__ = [
    "decode_text",
    "detect_encoding",
    "detect_encodings",
    "encoding_metadata",
    "looks_like_text",
    "read_text",
]

log = logging.getLogger("docshelf.parse")

_BOMS = (
    # UTF-32 BOMs go first: the UTF-32-LE BOM begins with the UTF-16-LE one.
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# When the detector rates several encodings alike (short files), the more widely used one wins.
_PREFERRED = (
    "utf_8", "cp1252", "iso8859_1", "iso8859_15", "cp1250", "cp1251", "cp866", "koi8_r", "cp1256",
    "cp932", "gb18030",
)  # fmt: skip
# The code pages files are mostly in; a reading in another must look better to win.
_COMMON = frozenset(
    codecs.lookup(name).name
    for name in (
        *_PREFERRED, "cp866", "koi8_u", "iso8859_2", "iso8859_4", "iso8859_5", "iso8859_6",
        "iso8859_7", "iso8859_8", "iso8859_9", "iso8859_13", "big5", "cp949", "euc_jp", "euc_kr",
        "shift_jis", "gb2312", "gbk", "cp874", "tis_620",
    )
)  # fmt: skip
_PREFERRED_NAMES = tuple(codecs.lookup(name).name for name in _PREFERRED)
_DETECT_BYTES = 1 << 20
_SCORE_SLACK = 0.01
_EXTRA_SLACK = 0.1


def detect_encoding(data: bytes) -> str | None:
    """The encoding ``data`` most plausibly is in (charset-normalizer), None if none fits."""
    found = detect_encodings(data)
    return found[0] if found else None


@dataclass(frozen=True)
class _Reading:
    names: tuple[str, ...]  # the encodings giving this text, the widely used first
    score: float
    odd: tuple[int, int, bool]

    @classmethod
    def of(cls, match: CharsetMatch) -> _Reading:
        aliases = (match.encoding, *match.could_be_from_charset)
        names = tuple(dict.fromkeys(codecs.lookup(name).name for name in aliases))
        return cls(
            names=tuple(sorted(names, key=_familiarity)),
            # how much sense the reading makes ("coherence": letter frequencies of a language)
            # less half its odd characters ("chaos")
            score=match.coherence - 0.5 * match.chaos,
            odd=(*oddness(str(match), match.encoding), all(map(_rare, names))),
        )


def detect_encodings(data: bytes) -> list[str]:
    """The encodings ``data`` may be in, the most plausible first (charset-normalizer's readings,
    ranked); empty when none fits."""
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # a base dependency; kept optional so a broken install still reads UTF-8
        return []
    sample = data[:_DETECT_BYTES]
    readings = [_Reading.of(m) for m in from_bytes(sample)]
    if not readings:
        return []
    least = min(r.odd for r in readings)
    if least[0]:
        # Every reading offered looks misread. charset-normalizer prunes its candidates: after a
        # good match it tries a few more of that family, and it skips code pages "similar" to
        # one that failed its chaos probe (Polish ISO-8859-2 went untried once cp1250 failed,
        # and ISO-8859-10 won: "zauwaŋyli"). So the common code pages it did not offer are
        # rated as well, and join when they look less misread.
        offered = {name for r in readings for name in r.names}
        extra = [name for name in sorted(_COMMON) if name not in offered and _decodes(sample, name)]
        if extra:
            best = max(r.score for r in readings)
            more = [_Reading.of(m) for m in from_bytes(sample, cp_isolation=extra, threshold=1.0)]
            # rated about as well: a reading in another script scores far lower (Vietnamese
            # cp1258 read as Arabic cp1256 "cَ nhiêجu" has no Latin letters to look odd)
            readings += [r for r in more if r.odd < least and r.score >= best - _EXTRA_SLACK]
            least = min(r.odd for r in readings)
    # Scores alone read French cp1252 as Baltic cp775 and Turkish cp1254 as cp1252, so the
    # readings that look least like a misreading go first (`oddness`: letters no one alphabet
    # holds together, a capital or a symbol inside a word), and of those alike, one in a widely
    # used code page. Among those, the ones within a hair of the best score go to the
    # preference order: chaos alone read a line or two of French as Baltic cp1257 ("crème" ->
    # "crčme"), coherence alone a mixed-language cp1252 file as DOS cp850.
    ranked = sorted(readings, key=lambda r: (r.odd, -r.score))
    top = ranked[0].score
    ties = {name for r in ranked if r.odd == least and r.score >= top - _SCORE_SLACK for name in r.names}
    first = [name for name in _PREFERRED_NAMES if name in ties][:1]
    # the rest, in case the whole file does not decode as the first megabyte did
    return list(dict.fromkeys([*first, *(name for r in ranked for name in r.names)]))


def _familiarity(encoding: str) -> tuple[bool, bool]:
    return encoding not in _PREFERRED_NAMES, _rare(encoding)


def _decodes(sample: bytes, encoding: str) -> bool:
    try:
        codecs.getincrementaldecoder(encoding)().decode(sample, final=False)
    except UnicodeDecodeError:
        return False
    return True


def _rare(encoding: str) -> bool:
    """Whether ``encoding`` is seldom what a file is in (Mac, HP, DOS and the later ISO sets)."""
    name = codecs.lookup(encoding).name
    return name not in _COMMON and not name.startswith(("utf", "cp125"))


def read_text(data: bytes, path: str, declared: str | None = None) -> tuple[str, str]:
    """(text, encoding): a BOM's encoding, else UTF-8 when valid, else ``declared`` (the
    charset the file names, e.g. HTML's <meta>) when the bytes fit it, else the detected one.

    Line endings are kept as they are: offsets into the text are offsets into the file's text.
    ParseError when no encoding fits, or the text holds NULs (a binary file).
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return _check_text(data[len(bom) :].decode(codec), path), codec
            except UnicodeDecodeError as exc:
                raise ParseError(
                    f"{path}: starts with a {codec.upper()} byte-order mark but is not valid "
                    f"{codec.upper()} (bad bytes at offset {exc.start + len(bom)}); convert it to UTF-8 "
                    "or exclude it"
                ) from None
    wide = bomless_utf(data)
    if wide is not None:
        try:
            return _check_text(data.decode(wide), path), wide
        except UnicodeDecodeError:
            pass  # judged on the first 64 KiB; the rest is not text in it (the NUL check says so)
    escaped = _iso2022(data)
    if escaped is not None:
        return _check_text(escaped[0], path), escaped[1]
    try:
        return _check_text(data.decode("utf-8"), path), "utf-8"
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    damaged = _damaged_utf8(data)
    if damaged is not None:
        log.info("%s: UTF-8 with invalid bytes, read with U+FFFD in their place", path)
        return _check_text(damaged, path), "utf-8"
    if declared is not None:
        try:
            return _check_text(data.decode(declared), path), declared
        except (UnicodeDecodeError, LookupError):
            pass  # a declaration that does not fit the bytes is wrong (it happens)
    for encoding in detect_encodings(data):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:  # detected on the first megabyte; the rest does not fit
            continue
        log.debug("%s: read as %s", path, encoding)
        return _check_text(text, path), encoding
    raise ParseError(
        f"{path}: no text encoding fits its bytes (not UTF-8: byte 0x{data[first_bad]:02x} at offset "
        f"{first_bad}, and no other encoding reads it cleanly); it is binary or damaged, so exclude it "
        "or save it again as UTF-8"
    )


_ISO2022 = ("iso2022_jp", "iso2022_jp_ext", "iso2022_jp_2004", "iso2022_jp_2", "iso2022_kr")


def _iso2022(data: bytes) -> tuple[str, str] | None:
    """(text, codec) of 7-bit ISO-2022 text (Japanese and Korean mail), None for anything else.

    Its bytes are ASCII, so they pass as UTF-8 with the escapes (ESC $ B, ESC $ ) C, SO/SI)
    left in as control characters; the codec that consumes every escape is the file's.
    """
    if b"\x1b$" not in data or not data.isascii():
        return None
    for codec in _ISO2022:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        if not any(ch in text for ch in "\x1b\x0e\x0f"):
            return text, codec
    return None


def _damaged_utf8(data: bytes) -> str | None:
    """The text of UTF-8 with a few invalid bytes (a bad copy, a truncated write), or None.

    More valid non-ASCII UTF-8 characters than invalid bytes means UTF-8: a legacy 8-bit
    file almost never holds valid UTF-8 sequences, and reading it as one would turn every
    accented letter into two characters of mojibake.
    """
    text = data.decode("utf-8", "replace")
    bad = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    good = sum(1 for ch in text if ch > "\x7f" and ch != "\ufffd")
    return text if 0 < bad < good else None


def encoding_metadata(encoding: str) -> dict[str, str]:
    """``{"encoding": ...}`` for a file that was not plain UTF-8 (the default goes unsaid)."""
    return {} if encoding == "utf-8" else {"encoding": encoding}


def decode_text(data: bytes, path: str) -> str:
    """The text of ``data`` as ``read_text`` decodes it."""
    return read_text(data, path)[0]


def _check_text(text: str, path: str) -> str:
    # A NUL never occurs in real text files; it means a binary file with a text name
    # (or UTF-16 without a BOM), which would index as garbage.
    nul = text.find("\x00")
    if nul >= 0:
        raise ParseError(
            f"{path}: contains NUL characters (first at character {nul}), so it is binary "
            "or UTF-16/32 without a byte-order mark; convert it to UTF-8 or exclude it"
        )
    return text


# C0 controls text files do not hold (tab, line feed, vertical tab, form feed, carriage return and
# escape, for coloured logs, do occur); DEL too.
_CONTROL = re.compile("[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_MAX_CONTROL_SHARE = 0.01


_PRIVATE_KEY = re.compile(rb"\s*-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")


def looks_like_text(head: bytes) -> bool:
    """Whether a file beginning with ``head`` reads as text: the check for files admitted by their
    content, not their name (``copyright``, ``README.Debian``), so that an extension-less program
    or image is left out. It decodes as ``read_text`` would (a BOM, UTF-8, lightly damaged UTF-8,
    else the detected encoding) and refuses NULs and more than a trace of control characters, which
    binaries without NULs in their first bytes still have (text almost never does). A private key
    (id_rsa, id_ed25519, a PEM or PGP key: text that opens with its BEGIN line) is no document
    either: left out, it is never searched or read by an agent."""
    if _PRIVATE_KEY.match(head):
        return False
    if head.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return True  # UTF-16/32 text is all NULs to a byte sniff; the parser checks the rest
    if b"\x00" in head:  # UTF-16/32 without a BOM is text whose NULs fall in place
        return bomless_utf(head) is not None
    try:  # incremental: a multi-byte character cut at the end of ``head`` is no error
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        damaged = _damaged_utf8(head)
        if damaged is None:
            encoding = detect_encoding(head)
            if encoding is None:
                return False
            damaged = head.decode(encoding, "replace")
        text = damaged
    return len(_CONTROL.findall(text)) <= len(text) * _MAX_CONTROL_SHARE
