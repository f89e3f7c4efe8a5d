"""Parsers and steps for the parse-worker tests: module-level, so that a worker can load them."""

from __future__ import annotations

import os
import time

from docshelf.errors import ParseError
from docshelf.parse import default_registry
from docshelf.parse.registry import ParserRegistry
from docshelf.types import ParsedDocument, Section

__all__ = ["PidParser", "pid_registry", "refuse", "slow_then", "where_and_title"]


class PidParser:
    """Parses ``.pid`` files into the id of the process that parsed them, after ``data`` seconds."""

    name = "pid"
    extensions = (".pid",)
    binary = False

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        time.sleep(float(data or b"0"))
        text = str(os.getpid())
        return ParsedDocument(text, [Section(0, len(text), "text")], self.name)


def pid_registry() -> ParserRegistry:
    registry = default_registry()
    registry.register(PidParser())
    return registry


def where_and_title(parsed: ParsedDocument) -> tuple[int, str | None]:
    return os.getpid(), parsed.title


def slow_then(parsed: ParsedDocument) -> str:
    time.sleep(1.2)
    return parsed.text


def refuse(parsed: ParsedDocument) -> None:
    raise ParseError("a.md: no text: refused by the step")
