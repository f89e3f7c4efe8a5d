"""`grep`: every place in the indexed documents that a phrase or regular expression matches, cited.

Candidates come from the store's trigram index (the documents whose chunks hold each piece of
the pattern); a pattern with no piece of three characters reads every document the filters
leave, within the time limit, and says so. Each candidate's text is rebuilt from its chunks at
their offsets, so a place is found once however the chunks overlap, and a match across a chunk
boundary is found too. Documents go in (collection, path) order; a cursor goes on from a cut.
"""

from __future__ import annotations

import base64
import json
import time
from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING

from docshelf.errors import ConfigError
from docshelf.shelf.types import GrepCount, GrepMatch, GrepRequest, GrepResult

if TYPE_CHECKING:
    from docshelf.chunk import LineIndex
    from docshelf.search.grep import Found, GrepPattern
    from docshelf.shelf.parts import Parts
    from docshelf.store.base import DocumentRecord
    from docshelf.types import Chunk

__all__ = ["grep"]

_BATCH = 64  # documents whose chunks are read in one go
_LONG_LINE = 600  # a line longer than this is shown cut around its first match
_AROUND = 240  # characters kept on each side of that match


def _encode_cursor(collection: str, path: str, skip: int) -> str:
    raw = json.dumps([collection, path, skip], ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[str, str, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        collection, path, skip = json.loads(raw)
        if isinstance(collection, str) and isinstance(path, str) and isinstance(skip, int) and skip >= 0:
            return collection, path, skip
    except (ValueError, TypeError):
        pass
    raise ConfigError("that grep cursor is not one grep gave; pass the cursor of the last result, or none")


def _documents(
    parts: Parts, req: GrepRequest, pattern: GrepPattern
) -> tuple[list[tuple[str, str, str]], bool]:
    """(id, collection, path) of the documents to read, in (collection, path) order, and whether
    that is all of them (no piece to look up, or no trigram index)."""
    store = parts.store
    flt = req.filter()
    found = store.grep_documents(pattern.pieces, flt) if pattern.pieces else None
    if found is not None:
        return found, False
    return store.grep_documents((), flt) or [], True


def _line_groups(found: Sequence[Found], lines: LineIndex) -> list[tuple[int, int, list[Found]]]:
    """Matches grouped by the line they start on: (first line, last line, matches)."""
    groups: list[tuple[int, int, list[Found]]] = []
    for f in found:
        first, last = lines.line_span(f.start, f.end)
        if groups and groups[-1][0] == first:
            g = groups[-1]
            groups[-1] = (first, max(g[1], last), [*g[2], f])
        else:
            groups.append((first, last, [f]))
    return groups


class _Doc:
    """One document's text and where its chunks put pages and headings."""

    def __init__(self, doc: DocumentRecord, chunks: list[Chunk], text: str) -> None:
        from docshelf.chunk import LineIndex

        self.doc = doc
        self.chunks = sorted(chunks, key=lambda c: c.char_start)
        self.starts = [c.char_start for c in self.chunks]
        self.text = text
        self.lines = LineIndex(text)
        self.pdf = doc.path.lower().endswith(".pdf")
        self._page_first: dict[int, int] = {}

    def chunk_at(self, offset: int) -> Chunk | None:
        i = bisect_right(self.starts, offset) - 1
        return self.chunks[max(i, 0)] if self.chunks else None

    def page_line(self, line: int, page: int) -> int:
        """``line`` counted from the first line of ``page`` (its first chunk's first line)."""
        if page not in self._page_first:
            start = min(c.char_start for c in self.chunks if c.page == page)
            self._page_first[page] = self.lines.line_of(start)
        return line - self._page_first[page] + 1

    def line_text(self, line: int) -> str:
        start = self.lines.line_start(line)
        end = self.lines.line_start(line + 1) if line < self.lines.line_count else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def match(self, first: int, last: int, found: list[Found], context: int) -> GrepMatch:
        from docshelf.types import cite

        doc = self.doc
        begin = self.lines.line_start(first)
        text = "\n".join(self.line_text(n) for n in range(first, last + 1))
        spans = [(f.start - begin, min(f.end - begin, len(text))) for f in found]
        if len(text) > _LONG_LINE:
            text, spans = _cut(text, spans)
        chunk = self.chunk_at(found[0].start)
        page = chunk.page if chunk else None
        heading = chunk.heading_path if chunk else ()
        line = first
        if self.pdf and page is not None:
            line = self.page_line(first, page)
            citation = cite(doc.path, line, line, page, doc.metadata.get("source_url"))
        else:
            citation = f"{doc.path}:{first}"
        count = self.lines.line_count
        before = tuple(self.line_text(n) for n in range(max(1, first - context), first))
        after = tuple(self.line_text(n) for n in range(last + 1, min(count, last + context) + 1))
        return GrepMatch(
            citation, doc.collection, doc.path, line, page, tuple(heading), text, tuple(spans), before, after
        )


def _cut(text: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """A long line cut to the matches near its first one, marked with "…" where text was left out."""
    lo = max(0, spans[0][0] - _AROUND)
    hi = min(len(text), spans[0][1] + _AROUND)
    head = "…" if lo > 0 else ""
    tail = "…" if hi < len(text) else ""
    shift = len(head) - lo
    kept = [(s + shift, e + shift) for s, e in spans if s >= lo and e <= hi] or [
        (max(spans[0][0], lo) + shift, min(spans[0][1], hi) + shift)
    ]
    return head + text[lo:hi] + tail, kept


def grep(parts: Parts, req: GrepRequest) -> GrepResult:
    """The matching lines (or documents, or counts) of ``req``, in document order, from its cursor."""
    from docshelf.search.grep import compile_pattern, stitch

    pattern = compile_pattern(req.pattern, regex=req.regex, ignore_case=req.ignore_case, word=req.word)
    began = time.monotonic()
    listed, scanned = _documents(parts, req, pattern)
    skip_to: tuple[str, str] | None = None
    skip = 0
    if req.cursor:
        collection, path, skip = _decode_cursor(req.cursor)
        skip_to = (collection, path)
        listed = [d for d in listed if (d[1], d[2]) >= skip_to]
    result = GrepResult(req.pattern, [], [], scanned=scanned)
    store = parts.store
    deadline = began + req.time_limit_s
    for at in range(0, len(listed), _BATCH):
        if time.monotonic() > deadline:
            result.timed_out = True
            result.cursor = _encode_cursor(listed[at][1], listed[at][2], 0)
            break
        ids = [d[0] for d in listed[at : at + _BATCH]]
        spans = store.chunk_texts(ids)
        texts = [stitch(spans.get(i, [])) for i in ids]
        result.documents_read += len(ids)
        if not pattern.matches("\n\n".join(texts)):
            continue  # none of them matches (most of a scan's batches): no line to look at
        hits = [
            (i, text, found)
            for i, text in zip(ids, texts, strict=True)
            if (found := list(pattern.find(text)))
        ]
        records = store.get_documents([i for i, _, _ in hits])
        chunks = store.chunks_of([i for i, _, _ in hits])
        for i, text, found in hits:
            if i in records and _visit(result, req, _Doc(records[i], chunks[i], text), found, skip_to, skip):
                break
        if result.cursor:
            break
    result.note = _note(req, result, len(listed), time.monotonic() - began, bool(pattern.pieces))
    return result


def _visit(
    result: GrepResult, req: GrepRequest, item: _Doc, found: list[Found], skip_to: tuple[str, str] | None,
    skip: int,
) -> bool:  # fmt: skip
    """Add one document's lines (or its count) to ``result``; True when the cap stops the call there."""
    doc = item.doc
    groups = _line_groups(found, item.lines)
    resumed = skip if skip_to == (doc.collection, doc.path) else 0
    if resumed >= len(groups):
        return False
    content = req.output == "content"
    if len(result.matches if content else result.counts) == req.max_results:
        result.cursor = _encode_cursor(doc.collection, doc.path, resumed)
        return True
    if not resumed:  # a document cut by the previous call was counted there
        result.counts.append(GrepCount(doc.collection, doc.path, len(groups)))
    if not content:
        return False
    for n, (first, last, where) in enumerate(groups[resumed:], start=resumed):
        if len(result.matches) == req.max_results:
            result.cursor = _encode_cursor(doc.collection, doc.path, n)
            return True
        result.matches.append(item.match(first, last, where, req.context))
    return False


def _note(req: GrepRequest, result: GrepResult, candidates: int, took: float, pieces: bool) -> str | None:
    notes: list[str] = []
    if result.scanned:
        why = (
            "this index has no trigram index yet (it was made before grep; a `docshelf index` adds it)"
            if pieces
            else "no part of the pattern (3 or more characters, no blanks) could be looked up in the "
            "trigram index"
        )
        notes.append(
            f"{why}, so documents were read one by one, within time_limit_s ({req.time_limit_s:g} s)"
        )
    if result.timed_out:
        notes.append(
            f"stopped at the time limit after {result.documents_read} of {candidates} documents "
            f"({took:.1f} s): pass the cursor to go on, or narrow with collections, path_glob or a "
            "literal part of 3+ characters"
        )
    elif result.cursor:
        what = "matching lines" if req.output == "content" else "documents"
        notes.append(f"cut at max_results ({req.max_results} {what}): pass the cursor to see the rest")
    if req.output == "content" and not result.matches and not result.timed_out and req.cursor is None:
        hint = "" if req.regex else "; for a regular expression pass regex"
        notes.append(f"nothing matches {req.pattern!r} in the documents searched{hint}")
    return "; ".join(notes) or None
