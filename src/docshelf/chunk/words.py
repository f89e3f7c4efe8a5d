"""The words of a long block, found as the chunker reaches them and forgotten once it has passed.

A block that has to be split at words is one without sentence ends: in a megabytes-long line
(a log, a minified or exported file) that is millions of words. Held as a list of (start, end)
tuples their spans took some 20 bytes of memory for each byte of text (45 MB of text peaked
at 1.1 GB); here they are two arrays of integers covering only the stretch being packed.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right

__all__ = ["Words"]

_WORD = re.compile(r"\S+")
_FORGET_AFTER = 4096  # words passed before the arrays are trimmed (trimming moves the rest)


class Words:
    """Words (runs of non-space) of ``text[start:end]``, by index from 0."""

    def __init__(self, text: str, start: int, end: int) -> None:
        self._found = _WORD.finditer(text, start, end)
        self._base = 0  # index of the first word held
        self._starts = array("q")
        self._ends = array("q")
        self.complete = False  # every word of the block has been found

    def _find_one(self) -> bool:
        m = next(self._found, None)
        if m is None:
            self.complete = True
            return False
        self._starts.append(m.start())
        self._ends.append(m.end())
        return True

    def has(self, i: int) -> bool:
        """Whether the block has a word ``i``."""
        while i - self._base >= len(self._starts) and self._find_one():
            pass
        return i - self._base < len(self._starts)

    def start(self, i: int) -> int:
        return self._starts[i - self._base]

    def end(self, i: int) -> int:
        return self._ends[i - self._base]

    def reach(self, offset: int) -> int:
        """Index of the last word found once the words starting before ``offset`` are (the
        first starting at or after it, or the block's last word)."""
        while (not self._starts or self._starts[-1] < offset) and self._find_one():
            pass
        return self._base + len(self._starts) - 1

    def last_ending_by(self, offset: int) -> int:
        """Index of the last word found that ends by ``offset`` (one before the first held
        word when none does)."""
        return self._base + bisect_right(self._ends, offset) - 1

    def forget_before(self, i: int) -> None:
        """Words before ``i`` are done with."""
        passed = i - self._base
        if passed > _FORGET_AFTER and passed > len(self._starts) // 2:
            del self._starts[:passed]
            del self._ends[:passed]
            self._base = i
