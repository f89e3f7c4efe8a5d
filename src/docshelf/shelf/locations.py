"""Places in a document as people and agents write them: a path with lines or a page, a citation."""

from __future__ import annotations

import re
from dataclasses import dataclass

from docshelf.errors import ConfigError

__all__ = ["Location", "parse_location"]

_PAGE_NOTE = re.compile(r"\s+\(page \d+\)$")  # the tail of a citation such as "slides.pptx:3-9 (page 2)"
_LINES = re.compile(r"^(?P<path>.+)(?::|#L)(?P<start>\d+)(?:-L?(?P<end>\d*))?$")  # :N-M, GitHub's #LN-LM
_PAGE = re.compile(r"^(?P<path>.+)#page=(?P<page>\d+)$")


@dataclass(frozen=True)
class Location:
    """A document and optionally lines or a page of it."""

    path: str
    lines: tuple[int | None, int | None] = (None, None)
    page: int | None = None

    @property
    def whole(self) -> bool:
        """True when no lines or page were given."""
        return self.lines == (None, None) and self.page is None


def parse_location(spec: str) -> Location:
    """``PATH``, ``PATH:N``, ``PATH:N-M``, ``PATH:N-`` or ``PATH#page=N``; a citation as search
    prints it works too, and GitHub's ``PATH#LN-LM``."""
    spec = _PAGE_NOTE.sub("", spec.strip())
    if m := _PAGE.match(spec):
        return Location(m["path"], page=int(m["page"]))
    if m := _LINES.match(spec):
        start = int(m["start"])
        end = start if m["end"] is None else (int(m["end"]) if m["end"] else None)
        if start < 1 or (end is not None and end < start):
            raise ConfigError(f"{spec!r}: lines are N, N-M or N- with 1 <= N <= M")
        return Location(m["path"], lines=(start, end))
    return Location(spec)
