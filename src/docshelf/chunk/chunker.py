"""Cut a ParsedDocument into spans that never exceed the embedding model's window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from docshelf.chunk.sections import normalise_sections
from docshelf.chunk.sentences import split_sentences
from docshelf.chunk.split import Splitter
from docshelf.chunk.tokens import ApproxTokenCounter, TokenCounter
from docshelf.parse.text import trim_span
from docshelf.types import ChunkSpan, ParsedDocument, Section

__all__ = ["ApproxTokenCounter", "TokenCounter", "chunk_document"]

_LINE_KINDS = frozenset({"code", "list", "table"})
_TAIL_CHARS_PER_TOKEN = 16  # window for finding the last sentences of a block


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
    opens: bool = True  # first piece of a line or sentence: a re-cut from earlier cuts the same here


@dataclass(slots=True)
class _Draft:
    """A chunk being built: its units, and its start once overlap has moved it."""

    units: list[_Unit]
    group: int  # heading section it belongs to; overlap never crosses groups
    start: int = 0
    tokens: int = 0


class _Chunker(Splitter):
    """A document's sections as units within budget, packed into chunks, overlapped."""

    # -- units ---------------------------------------------------------------

    def units(self, sections: list[Section]) -> list[_Unit]:
        units: list[_Unit] = []
        for sec in sections:
            heading = sec.kind == "heading"
            level = 0 if sec.kind in _LINE_KINDS else 1  # code splits at lines, prose at sentences
            parts = self.pieces(sec.start, sec.end, level)
            whole = len(parts) == 1 and parts[0][:2] == (sec.start, sec.end)  # it fit
            units += [
                _Unit(s, e, n, sec, heading, i == 0, not whole, opens)
                for i, (s, e, n, opens) in enumerate(parts)
            ]
        return units

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
            # a chunk never spans a page break, so its page citation holds for all of its text
            hard = new_section or bool(cur and u.section.page != cur[-1].section.page)
            # a heading, or a line, alone is a useless hit that BM25 ranks high for its one word:
            # what follows it joins it, or is cut so that its head does
            fragment = bool(cur) and not hard and not u.heading and (only_headings or tokens < self.max // 4)
            if fragment and tokens + u.tokens > limit:
                rest, more = self.rest_of_block(pending, u, limit - tokens)
                pieces = self.head_after(u, rest, limit - tokens, more)
                pending.extend(reversed(pieces or rest))
                if pieces:
                    continue
            # an oversized block starts a chunk of its own, unless the chunk so far is a fragment
            forced = hard or (
                mode == "auto" and u.block_start and u.oversized and not only_headings and not fragment
            )
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

    def rest_of_block(self, pending: list[_Unit], u: _Unit, room: int) -> tuple[list[_Unit], bool]:
        """The later pieces of ``u``'s oversized block that a new cut of its head can reach, taken
        off the ``pending`` stack: ``room`` tokens and a chunk more, up to a piece that opens a line
        or sentence; and whether the block goes on after them. Not the whole rest: a block of 100,000
        lines was cut again after each short chunk in it, the square of its size."""
        rest: list[_Unit] = []
        tokens = u.tokens
        while u.oversized and pending and pending[-1].section is u.section and not pending[-1].block_start:
            if tokens > room + self.max and pending[-1].opens:
                return rest, True
            rest.append(pending.pop())
            tokens += rest[-1].tokens
        return rest, False

    def head_after(self, u: _Unit, rest: list[_Unit], room: int, more: bool) -> list[_Unit]:
        """The text from ``u`` to the end of ``rest`` (the block's next pieces; ``more``: others
        follow them) cut anew: first pieces of at most ``room`` tokens in all, to join the fragment
        before them, then the rest at full size, opening a chunk at least a quarter full (a cut
        that left a remnant would only move the fragment); [] when the room is too small to be
        worth it."""
        small = self.max // 4
        total = u.tokens + sum(r.tokens for r in rest) + (self.max if more else 0)
        budget = min(room, total - small)
        if budget < max(8, small):
            return []
        start, end = u.start, (rest[-1].end if rest else u.end)
        level = 0 if u.section.kind in _LINE_KINDS else 1
        saved, self.max = self.max, budget
        try:
            head: list[tuple[int, int, int, bool]] = []
            taken = 0
            for s, e, n, opens in self.split(start, end, level):
                if taken + n > budget:
                    break
                head.append((s, e, n, opens))
                taken += n
        finally:
            self.max = saved
        s, e = trim_span(self.text, head[-1][1], end)
        tail = self.pieces(s, e, level) if e > s else []
        return [
            _Unit(s, e, n, u.section, False, u.block_start and i == 0, True, opens)
            for i, (s, e, n, opens) in enumerate(head)
        ] + [_Unit(s, e, n, u.section, False, i == 0, True, opens) for i, (s, e, n, opens) in enumerate(tail)]

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
