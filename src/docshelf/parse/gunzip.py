"""Gzipped text files (``notes.md.gz``, ``changelog.Debian.gz``) read through to the inner format.

Debian ships most of /usr/share/doc gzipped and man pages, logs and dumps often are. The file is
inflated in memory, in steps, and stopped as soon as it unpacks to more than the limit: a small
file that unpacks to gigabytes (a gzip bomb) costs the limit, never its whole size.
"""

from __future__ import annotations

import zlib
from dataclasses import replace
from typing import TYPE_CHECKING

from docshelf.errors import ParseError
from docshelf.parse.decode import looks_like_text

if TYPE_CHECKING:
    from docshelf.parse.parser import Parser
    from docshelf.types import ParsedDocument

__all__ = ["GunzipParser", "gunzip", "gunzipped_head_is_text", "inner_name"]

_GZIP = 16 + zlib.MAX_WBITS  # zlib's window bits for a gzip header and trailer
_STEP = 1 << 20


def inner_name(path: str) -> str:
    """``path`` without its ``.gz``: the name that chooses the parser of what is inside."""
    return path[:-3] if path.lower().endswith(".gz") else path


def gunzip(data: bytes, path: str, limit: int, setting: str) -> bytes:
    """The unpacked bytes of gzip ``data`` (every member, as ``gunzip`` reads them); ParseError
    when it is no gzip, is cut short, or unpacks to more than ``limit`` bytes (``setting`` names
    the limit in the message), found out after inflating ``limit`` + 1 bytes at most."""
    out = bytearray()
    rest = data
    while True:
        inflate = zlib.decompressobj(_GZIP)
        pending = rest
        try:
            while not inflate.eof:
                # at most what the limit leaves (+1, to tell "exactly the limit" from "over it")
                part = inflate.decompress(pending, min(_STEP, limit + 1 - len(out)))
                out += part
                if len(out) > limit:
                    raise ParseError(
                        f"{path}: unpacks to over {limit / 1_048_576:g} MB ({setting}); raise it or "
                        "exclude the file (a gzip bomb stops here)"
                    )
                pending = inflate.unconsumed_tail
                if not part and not pending:
                    break
        except zlib.error as exc:
            raise ParseError(f"{path}: not a readable gzip file ({exc}); repack or exclude it") from None
        if not inflate.eof:
            raise ParseError(
                f"{path}: the gzip data is cut short (an unfinished copy?); copy it again or exclude it"
            )
        rest = inflate.unused_data
        if not rest.strip(b"\x00"):  # the end, or the zero padding tape archivers add
            return bytes(out)


def gunzipped_head_is_text(head: bytes) -> bool:
    """Whether the first bytes of a gzip file unpack to the start of a text file (the walk's
    content check for ``copyright.gz``: a gzipped program stays out like an unpacked one)."""
    try:
        start = zlib.decompressobj(_GZIP).decompress(head, len(head))
    except zlib.error:
        return True  # not gzip at all: parsing says so, as a skipped file's reason
    return looks_like_text(start)


class GunzipParser:
    """``inner``'s format, gzipped: unpacked (within ``limit`` bytes), then parsed by ``inner``
    under the name without ``.gz``. Binary, so the walk's byte sniff leaves it alone."""

    binary: bool = True
    extensions: tuple[str, ...] = (".gz",)

    def __init__(self, inner: Parser, limit: int, setting: str) -> None:
        self.inner = inner
        self.name = inner.name
        self.limit = limit
        self.setting = setting

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Unpack ``data`` and parse it as the file named ``path`` without ``.gz``."""
        inner = inner_name(path)
        unpacked = gunzip(data, path, self.limit, self.setting)
        try:
            doc = self.inner.parse(unpacked, inner)
        except ParseError as exc:  # the message names the file as it is on disk
            message = str(exc)
            if message.startswith(inner + ":"):
                message = path + message[len(inner) :]
            raise ParseError(message) from None
        return replace(doc, metadata={**doc.metadata, "compression": "gzip"})
