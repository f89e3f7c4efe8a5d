"""Character offset -> line number, for citations."""

from __future__ import annotations

import re
from bisect import bisect_right

__all__ = ["LineIndex"]

# The same line ends as editors and Python's universal newlines: \r\n, \r, \n.
_NEWLINE = re.compile(r"\r\n|\r|\n")


class LineIndex:
    """Answers "which line is offset X on" by bisecting the line start offsets.

    Building is O(n); each lookup is O(log lines). A line terminator belongs to
    the line it ends; ``line_of(len(text))`` is the line after a final newline.
    """

    def __init__(self, text: str) -> None:
        self._length = len(text)
        self._starts = [0]
        self._starts.extend(m.end() for m in _NEWLINE.finditer(text))

    @property
    def line_count(self) -> int:
        """Number of lines as str.splitlines() would count them for \\n/\\r text."""
        starts = self._starts
        return len(starts) - 1 if starts[-1] == self._length else len(starts)

    def line_of(self, offset: int) -> int:
        """1-based line holding character ``offset`` (0 <= offset <= len(text))."""
        if not 0 <= offset <= self._length:
            raise ValueError(f"offset {offset} is outside the text (0..{self._length})")
        return bisect_right(self._starts, offset)

    def line_start(self, line: int) -> int:
        """Offset where 1-based ``line`` begins."""
        if not 1 <= line <= len(self._starts):
            raise ValueError(f"line {line} is outside the text (1..{len(self._starts)})")
        return self._starts[line - 1]

    def line_span(self, start: int, end: int) -> tuple[int, int]:
        """First and last line (1-based, inclusive) of the span ``[start, end)``: where a grep
        match starts and ends."""
        return self.line_of(start), self.line_of(max(start, end - 1))
