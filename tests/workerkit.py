"""Parsers and steps for the parse-worker tests: module-level, so that a worker can load them."""

from __future__ import annotations

import os
import time
from pathlib import Path

from docshelf.errors import ParseError
from docshelf.parse import default_registry
from docshelf.parse.registry import ParserRegistry
from docshelf.types import ParsedDocument, Section

__all__ = ["PidParser", "pid_registry", "refuse", "slow_then", "where_and_title"]


class PidParser:
    """Parses ``.pid`` files into the id of the process that parsed them, after ``data`` seconds
    (or, for ``until:PATH``, once PATH exists, having made PATH.started; ``make:PATH`` makes it)."""

    name = "pid"
    extensions = (".pid",)
    binary = False

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        said = data.decode()
        if said.startswith("make:"):
            Path(said[5:]).touch()
        elif said.startswith("until:"):
            Path(said[6:] + ".started").touch()
            deadline = time.monotonic() + 20
            while not Path(said[6:]).exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        else:
            time.sleep(float(said or "0"))
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
