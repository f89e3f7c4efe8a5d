"""Turn file bytes into text without changing it, so offsets map back to the file."""

from __future__ import annotations

import codecs

from docshelf.errors import ParseError

__all__ = ["decode_text"]

_CONVERT_HINT = (
    "convert it to UTF-8 (for example `iconv -f WINDOWS-1252 -t UTF-8 in > out`, "
    "or 'Save with encoding: UTF-8' in your editor) and index it again"
)


def decode_text(data: bytes, path: str) -> str:
    """Decode UTF-8 (BOM stripped) or BOM-marked UTF-16/UTF-32; refuse anything else.

    Line endings are kept as they are: offsets into the result are offsets into
    the file's text. Raises ParseError for other encodings and binary data.
    """
    # UTF-32 BOMs go first: the UTF-32-LE BOM begins with the UTF-16-LE one.
    for bom, codec in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(codec)
            except UnicodeDecodeError as exc:
                raise ParseError(
                    f"{path}: starts with a {codec.upper()} byte-order mark but is not valid "
                    f"{codec.upper()} (bad bytes at offset {exc.start + len(bom)}); "
                    f"{_CONVERT_HINT}"
                ) from None
            return _check_text(text, path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"{path}: is not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}); {_CONVERT_HINT}"
        ) from None
    return _check_text(text, path)


def _check_text(text: str, path: str) -> str:
    # A NUL never occurs in real text files; it means a binary file with a text name
    # (or UTF-16 without a BOM), which would index as garbage.
    nul = text.find("\x00")
    if nul >= 0:
        raise ParseError(
            f"{path}: contains NUL characters (first at character {nul}), so it is binary "
            f"or UTF-16/32 without a byte-order mark; {_CONVERT_HINT}, or exclude it"
        )
    return text
