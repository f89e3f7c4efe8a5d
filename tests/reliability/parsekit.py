"""Parsers that misbehave the way real ones can: stuck in one call, eating memory, crashing.

Module-level classes, so that the parse worker can load them (it imports this module).
"""

from __future__ import annotations

import os
import signal
import time

from docshelf.parse import default_registry
from docshelf.parse.registry import ParserRegistry
from docshelf.types import ParsedDocument, Section

__all__ = ["misbehaving_registry"]


class _Base:
    binary = False

    def _doc(self, data: bytes) -> ParsedDocument:
        text = data.decode("utf-8", "replace")
        return ParsedDocument(text, [Section(0, len(text), "text")], self.name)


class StuckParser(_Base):
    """One call that does not return for a minute (a C library on a hostile file)."""

    name = "stuck"
    extensions = (".stuck",)

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        time.sleep(60)
        return self._doc(data)


class HungryParser(_Base):
    """Builds a 1 GB buffer (a decompression bomb)."""

    name = "hungry"
    extensions = (".hungry",)

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        blob = bytearray(1024 * 1_048_576)
        return self._doc(data[: len(blob) and 100])


class CrashingParser(_Base):
    """Dies of a segmentation fault (a C extension's bug)."""

    name = "crashing"
    extensions = (".crash",)

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        os.kill(os.getpid(), signal.SIGSEGV)
        return self._doc(data)


def misbehaving_registry() -> ParserRegistry:
    registry = default_registry()
    for parser in (StuckParser(), HungryParser(), CrashingParser()):
        registry.register(parser)
    return registry
