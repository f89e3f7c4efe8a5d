"""Cutting a span of text that is over the token budget into pieces within it: at lines or
sentences, then words, then characters, counting as few times as it can."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from docshelf.chunk.sentences import safe_cut, split_sentences
from docshelf.chunk.tokens import TokenCounter
from docshelf.chunk.words import Words
from docshelf.parse.text import split_lines, trim_span

__all__ = ["Splitter"]

_PROBE_CHARS_PER_TOKEN = 8  # beyond ~4-5 for prose, so probes usually settle it
_FULL = 0.9  # a piece of an unspaced run this full is kept, not searched for the longest one
_WORD_WINDOW_CHARS = 1 << 16  # words found ahead of a piece being cut at words, to start with


class Splitter:
    """Counts and cuts spans of ``text`` against a budget of ``max`` tokens."""

    def __init__(self, text: str, counter: TokenCounter, max_tokens: int) -> None:
        self.text = text
        self.counter = counter
        self.max = max_tokens
        self.chars_per_token = 0.0  # seen in the last search; 0 until one ran

    def count(self, start: int, end: int) -> int:
        return self.counter.count(self.text[start:end])

    def bounded_count(self, start: int, end: int) -> int:
        """The count of ``[start, end)``, or ``max + 1`` when its head alone is over budget: a long
        block (an unspaced run of megabytes) is not counted whole just to learn it must be split."""
        probe = start + _PROBE_CHARS_PER_TOKEN * self.max
        if probe < end and self.count(start, probe) > self.max:
            return self.max + 1
        return self.count(start, end)

    def split(self, start: int, end: int, level: int) -> Iterator[tuple[int, int, int, bool]]:
        """Pieces of an oversized span, each within budget: by lines (level 0) or
        sentences (1), each counted once; then words and characters (2). Each piece says
        whether it opens one of the span's parts (a line, a sentence, a run of words): cut
        again from any earlier point, the text from there on is cut the same way."""
        if level >= 2:
            for i, (s, e, n) in enumerate(self.split_words(start, end)):
                yield s, e, n, i == 0
            return
        if level == 0:
            parts = [trim_span(self.text, s, e) for s, e in split_lines(self.text, start, end)]
            parts = [(s, e) for s, e in parts if e > s]
        else:
            parts = split_sentences(self.text, start, end)
        if len(parts) <= 1:
            yield from self.split(start, end, level + 1)
            return
        for s, e in parts:
            n = self.bounded_count(s, e)
            if n <= self.max:
                yield s, e, n, True
            else:
                for i, (ps, pe, pn, opens) in enumerate(self.split(s, e, level + 1)):
                    yield ps, pe, pn, opens or i == 0

    def longest(
        self, origin: int, first: int, last: int, end_of: Callable[[int], int], guess: int = -1
    ) -> tuple[int, int]:
        """Largest j in [first, last] whose span ``[origin, end_of(j))`` fits, and its count;
        (first - 1, 0) when none. Gallops up from ``guess`` (or ``first``), then bisects:
        O(log n) counts rather than one per word or character."""

        def measure(j: int) -> int:
            return self.count(origin, end_of(j))

        good, good_n, bad, step = first - 1, 0, last + 1, 1
        if first < guess <= last:
            n = measure(guess)
            if n <= self.max:
                good, good_n, step = guess, n, max(1, (guess - first) // 16)
            else:
                bad = guess
        while bad > last and good < last:
            cand = min(last, good + step)
            n = measure(cand)
            if n > self.max:
                bad = cand
            else:
                good, good_n, step = cand, n, step * 2
        while bad - good > 1:
            mid = (good + bad) // 2
            n = measure(mid)
            if n <= self.max:
                good, good_n = mid, n
            else:
                bad = mid
        if good >= first:
            # Remember the density so the next search starts near its answer.
            self.chars_per_token = max(1.0, (end_of(good) - origin) / max(1, good_n))
        return good, good_n

    def estimated_cut(self, pos: int, end: int) -> tuple[int, int]:
        """Where a piece of a long unspaced run starting at ``pos`` ends, and its count.

        Cut where the density seen so far says the piece fills the budget, counted exactly, then
        moved in proportion to the count (a few counts, each of one piece) until it is at least
        ``_FULL`` full; only if that does not settle it, the exact search for the longest piece.
        Exactly longest pieces cost ~10 counts each: with a pure-Python tokenizer, seconds per
        64 KB."""
        density = self.chars_per_token or 1.0  # before any evidence: a token per character
        good, good_n, bad = pos, 0, end + 1
        cut = min(end, pos + max(1, int(density * self.max)))
        for _ in range(3):
            n = self.count(pos, cut)
            if n <= self.max:
                good, good_n = cut, n
                if cut == end or n >= _FULL * self.max:
                    break
            else:
                bad = cut
            cut = pos + max(1, int((cut - pos) * 0.97 * self.max / max(n, 1)))
            cut = min(cut, end, bad - 1)
            if cut <= good:
                break
        if good == end or good_n >= _FULL * self.max or bad == good + 1:
            if good > pos:
                self.chars_per_token = max(1.0, (good - pos) / max(1, good_n))
            return good, good_n
        return self.longest(pos, pos + 1, min(end, bad - 1), int, good)

    def reach(self, origin: int) -> int:
        """Offset a piece starting at ``origin`` probably fits up to (-1: no idea yet)."""
        if not self.chars_per_token:
            return -1
        return origin + int(self.chars_per_token * self.max * 0.9)

    def split_words(self, start: int, end: int) -> Iterator[tuple[int, int, int]]:
        """Longest runs of whole words that fit; a word too long alone (CJK text
        without spaces, a URL) is cut between characters."""
        words = Words(self.text, start, end)
        i = 0
        while words.has(i):
            s, e = words.start(i), words.end(i)
            if self.bounded_count(s, e) > self.max:  # a word too long alone
                yield from self.split_chars(s, e)
                i += 1
            else:
                j, n = self.longest_words(words, i)
                if j < i:
                    yield from self.split_chars(s, e)
                    i += 1
                else:
                    yield s, words.end(j), n
                    i = j + 1
            words.forget_before(i)

    def longest_words(self, words: Words, i: int) -> tuple[int, int]:
        """``longest`` over the words from ``i`` on, searched among the next stretch of them
        (widened while the longest reaches its end): not all of a megabytes-long line."""
        s = words.start(i)
        reach = self.reach(s)
        window = max(_WORD_WINDOW_CHARS, 4 * (reach - s))
        while True:
            last = words.reach(s + window)
            guess = words.last_ending_by(reach) if reach >= 0 else -1
            j, n = self.longest(s, i, last, words.end, guess)
            if j < last or words.complete:
                return j, n
            window *= 4

    def split_chars(self, start: int, end: int) -> Iterator[tuple[int, int, int]]:
        """Character runs that fit, not cutting through combining sequences."""
        pos = start
        while pos < end:
            cut, n = self.estimated_cut(pos, end)
            if cut <= pos:
                raise ValueError(
                    f"max_tokens={self.max} is too small: the single character "
                    f"{self.text[pos]!r} counts {self.count(pos, pos + 1)} tokens"
                )
            safe = safe_cut(self.text, pos, cut)
            if safe != cut and (m := self.count(pos, safe)) <= self.max:
                cut, n = safe, m
            yield pos, cut, n
            pos = cut

    def pieces(self, start: int, end: int, level: int) -> list[tuple[int, int, int, bool]]:
        """``[start, end)`` whole when it fits (counted once), else split."""
        n = self.bounded_count(start, end)
        return [(start, end, n, True)] if n <= self.max else list(self.split(start, end, level))
