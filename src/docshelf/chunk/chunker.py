"""Cut a ParsedDocument into spans that never exceed the embedding model's window."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from docshelf.chunk.sections import normalise_sections
from docshelf.chunk.sentences import safe_cut, split_sentences
from docshelf.chunk.tokens import ApproxTokenCounter, TokenCounter
from docshelf.chunk.words import Words
from docshelf.parse.text import split_lines, trim_span
from docshelf.types import ChunkSpan, ParsedDocument, Section

__all__ = ["ApproxTokenCounter", "TokenCounter", "chunk_document"]

_LINE_KINDS = frozenset({"code", "list", "table"})
_PROBE_CHARS_PER_TOKEN = 8  # beyond ~4-5 for prose, so probes usually settle it
_TAIL_CHARS_PER_TOKEN = 16  # window for finding the last sentences of a block
_FULL = 0.9  # a piece of an unspaced run this full is kept, not searched for the longest one
_WORD_WINDOW_CHARS = 1 << 16  # words found ahead of a piece being cut at words, to start with


@dataclass(slots=True)
class _Unit:
    """An indivisible piece for packing, with its exact token count."""

    start: int
    end: int
    tokens: int
    section: Section
    heading: bool
    block_start: bool  # first piece of its section
    oversized: bool  # its section had to be split


@dataclass(slots=True)
class _Draft:
    """A chunk being built: its units, and its start once overlap has moved it."""

    units: list[_Unit]
    group: int  # heading section it belongs to; overlap never crosses groups
    start: int = 0
    tokens: int = 0


class _Chunker:
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

    # -- units ---------------------------------------------------------------

    def units(self, sections: list[Section]) -> list[_Unit]:
        units: list[_Unit] = []
        for sec in sections:
            heading = sec.kind == "heading"
            tokens = self.bounded_count(sec.start, sec.end)
            if tokens <= self.max:
                units.append(_Unit(sec.start, sec.end, tokens, sec, heading, True, False))
                continue
            level = 0 if sec.kind in _LINE_KINDS else 1  # code splits at lines, prose at sentences
            for i, (s, e, n) in enumerate(self.split(sec.start, sec.end, level)):
                units.append(_Unit(s, e, n, sec, heading, i == 0, True))
        return units

    def split(self, start: int, end: int, level: int) -> Iterator[tuple[int, int, int]]:
        """Pieces of an oversized span, each within budget: by lines (level 0) or
        sentences (1), each counted once; then words and characters (2)."""
        if level >= 2:
            yield from self.split_words(start, end)
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
                yield s, e, n
            else:
                yield from self.split(s, e, level + 1)

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

    # -- packing -------------------------------------------------------------

    def pack(self, units: list[_Unit], mode: str, reserve: int) -> list[_Draft]:
        """Greedy packing; a chunk continuing a section is filled only to ``max - reserve``
        so the overlap added later has room (full chunks could take none)."""
        drafts: list[_Draft] = []
        cur: list[_Unit] = []
        tokens, group, cur_group, only_headings, limit = 0, 0, 0, True, self.max
        pending = list(reversed(units))  # a stack, so a unit can be replaced by its pieces
        while pending:
            u = pending.pop()
            # In auto mode a run of headings stays together with the text after it.
            new_section = u.heading and u.block_start and (mode == "headings" or not only_headings)
            forced = new_section or (mode == "auto" and u.block_start and u.oversized and not only_headings)
            # a chunk never spans a page break, so its page citation holds for all of its text
            forced = forced or bool(cur and u.section.page != cur[-1].section.page)
            if cur and only_headings and not forced and not u.heading and tokens + u.tokens > limit:
                # a heading alone is a useless hit: cut the text after it so its head joins it
                pieces = self.pieces_after(u, limit - tokens)
                if pieces:
                    pending.extend(reversed(pieces))
                    continue
            if cur and (forced or tokens + u.tokens > limit):
                drafts.append(_Draft(cur, cur_group))
                cur, tokens, only_headings = [], 0, True
                limit = self.max if new_section else self.max - reserve
            if new_section:
                group += 1
            if not cur:
                cur_group = group
            cur.append(u)
            tokens += u.tokens
            only_headings = only_headings and u.heading
        if cur:
            drafts.append(_Draft(cur, cur_group))
        return drafts

    def pieces_after(self, u: _Unit, room: int) -> list[_Unit]:
        """``u`` cut into pieces of at most ``room`` tokens, so the first can join the heading
        before it (packing recombines the rest); [] when the room is too small to be worth it."""
        if room < max(8, self.max // 4):
            return []
        saved, self.max = self.max, room
        try:
            parts = list(self.split(u.start, u.end, 0 if u.section.kind in _LINE_KINDS else 1))
        finally:
            self.max = saved
        return [
            _Unit(s, e, n, u.section, u.heading, u.block_start and i == 0, True)
            for i, (s, e, n) in enumerate(parts)
        ]

    def fit(self, draft: _Draft) -> list[_Draft]:
        """Check a draft with the real counter and halve it until every part fits;
        summed unit counts can be off when the counter is not additive."""
        units = draft.units
        n = self.count(units[0].start, units[-1].end)
        if n <= self.max:
            draft.start = units[0].start
            draft.tokens = n
            return [draft]
        if len(units) == 1:
            raise RuntimeError("the token counter gave two counts for the same text")
        half, acc, cut = sum(u.tokens for u in units) / 2, 0, 1
        for i, u in enumerate(units[:-1]):
            acc += u.tokens
            cut = i + 1
            if acc >= half:
                break
        return self.fit(_Draft(units[:cut], draft.group)) + self.fit(_Draft(units[cut:], draft.group))

    def tail_sentences(self, start: int, end: int, budget: int) -> list[tuple[int, int]]:
        """(start, tokens) of the last sentences of ``[start, end)``, latest first, until
        they pass ``budget``; only the block's tail is split, not all of it."""
        window = _TAIL_CHARS_PER_TOKEN * budget + 256
        while True:
            lo = max(start, end - window)
            spans = split_sentences(self.text, lo, end)
            if lo > start:
                spans = spans[1:]  # the window may cut its first sentence short
            out: list[tuple[int, int]] = []
            total = 0
            for s, e in reversed(spans):
                n = self.count(s, e)
                out.append((s, n))
                total += n
                if total > budget:
                    return out
            if lo == start:
                return out
            window *= 4

    def overlap(self, prev: _Draft, draft: _Draft, overlap_tokens: int) -> None:
        """Start ``draft`` earlier by whole trailing sentences of ``prev``."""
        budget = min(overlap_tokens, self.max - draft.tokens)
        if budget <= 0:
            return
        end = draft.units[-1].end
        starts: list[int] = []  # candidate starts, latest first
        taken = 0
        for u in reversed(prev.units):
            if u.heading:
                break  # a heading belongs to the chunk it opens, not to the overlap
            for s, n in self.tail_sentences(u.start, u.end, budget - taken):
                if s <= prev.units[0].start or taken + n > budget:
                    break
                taken += n
                starts.append(s)
            else:
                continue
            break
        # Summed sentence counts may differ from the real count: recheck, widest first.
        for s in reversed(starts):
            n = self.count(s, end)
            if n <= self.max:
                draft.start, draft.tokens = s, n
                return


def _heading_path(draft: _Draft) -> tuple[str, ...]:
    """The path of the last heading a chunk opens with, else of its first section."""
    path = draft.units[0].section.heading_path
    for u in draft.units:
        if not u.heading:
            break
        path = u.section.heading_path
    # every chunk stores its path: a megabyte-long "heading" (one huge slide title, an unbroken
    # line under '#') would otherwise be copied into each of thousands of chunks
    return tuple(h if len(h) <= _MAX_HEADING_CHARS else h[: _MAX_HEADING_CHARS - 1] + "…" for h in path)


_MAX_HEADING_CHARS = 200


def chunk_document(
    doc: ParsedDocument,
    counter: TokenCounter,
    max_tokens: int,
    overlap_tokens: int = 0,
    mode: Literal["auto", "headings"] = "auto",
) -> list[ChunkSpan]:
    """Cut ``doc``'s body into spans of at most ``max_tokens`` tokens each.

    "auto" packs blocks up to the budget, starting a chunk at every heading;
    "headings" makes one chunk per heading section. Oversized blocks split at
    sentences, then words, then characters. Every span is trimmed, lies after
    the frontmatter, and is verified with ``counter``; together the spans cover
    all non-whitespace body text.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
    if overlap_tokens < 0:
        raise ValueError(f"overlap_tokens must not be negative, not {overlap_tokens}")
    if mode not in ("auto", "headings"):
        raise ValueError(f"mode must be 'auto' or 'headings', not {mode!r}")
    chunker = _Chunker(doc.text, counter, max_tokens)
    units = chunker.units(normalise_sections(doc))
    # At most half of a chunk is ever given over to repeating the previous one.
    reserve = min(overlap_tokens, max_tokens // 2)
    drafts = [part for d in chunker.pack(units, mode, reserve) for part in chunker.fit(d)]
    if overlap_tokens:
        # Back to front, so each overlap reads the previous chunk's own units.
        for i in range(len(drafts) - 1, 0, -1):
            # never across a page break either: the overlap would cite the wrong page
            same_page = drafts[i].units[0].section.page == drafts[i - 1].units[-1].section.page
            if drafts[i].group == drafts[i - 1].group and same_page:
                chunker.overlap(drafts[i - 1], drafts[i], overlap_tokens)
    return [
        ChunkSpan(
            start=d.start,
            end=d.units[-1].end,
            heading_path=_heading_path(d),
            page=d.units[0].section.page,
            token_count=d.tokens,
        )
        for d in drafts
    ]
