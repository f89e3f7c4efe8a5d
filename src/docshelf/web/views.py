"""What the page receives: hits, the text around a cited passage and the shelf's state, as JSON.

Document text travels as plain strings and the places to mark as offsets; the page builds its
elements from them with textContent, so nothing a document holds is ever read as HTML.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docshelf.shelf import document_uri, iso, join_notes

if TYPE_CHECKING:
    from docshelf.shelf import Chunk, Hit, SearchResult, Shelf, Status

__all__ = ["empty_status", "hit_row", "reader_payload", "result_payload", "snippet", "status_payload"]

SNIPPET_CHARS = 280
READER_TOKENS = 30_000  # about 120 kB of text: more passages are a click away
READER_CHARS = 200_000  # and never more characters than this, however long one passage is


def snippet(hit: Hit) -> dict[str, Any]:
    """The window of the hit's text its snippet shows, as [piece, marked] pairs; ``cut_before`` and
    ``cut_after`` say whether text goes on beyond it; ``lines`` (code): whole lines, to show as
    they are laid out."""
    text, spans = hit.text, hit.highlights
    start, end = hit.snippet_window or (0, min(len(text), SNIPPET_CHARS))
    parts: list[list[Any]] = []
    pos = start
    for s, e in spans:
        s, e = max(s, start), min(e, end)
        if s >= e:
            continue
        if s > pos:
            parts.append([text[pos:s], False])
        parts.append([text[s:e], True])
        pos = e
    if pos < end:
        parts.append([text[pos:end], False])
    if hit.snippet_window is None:  # a hit without a snippet: the passage's start
        return {"parts": parts, "cut_before": False, "cut_after": end < len(text), "lines": False}
    # the shelf's snippet keeps line breaks for code only (prose flows)
    before, after = hit.snippet_cut
    return {"parts": parts, "cut_before": before, "cut_after": after, "lines": "\n" in hit.snippet}


def hit_row(hit: Hit) -> dict[str, Any]:
    return {
        "chunk_id": hit.chunk_id, "doc_id": hit.doc_id, "collection": hit.collection, "path": hit.path,
        "title": hit.title, "citation": hit.citation, "heading": list(hit.heading_path),
        "confidence": hit.confidence, "matched": list(hit.matched), "page": hit.page,
        "page_label": hit.page_label, "lines": [hit.line_start, hit.line_end], "tags": list(hit.tags),
        "lifecycle": hit.lifecycle, "source_url": hit.source_url,
        "also_in": [d.citation for d in hit.also_in],
        "snippet": snippet(hit),
        "marks": [list(s) for s in hit.highlights],
    }  # fmt: skip


def result_payload(result: SearchResult) -> dict[str, Any]:
    return {
        "query": result.query, "mode": result.mode, "took_ms": round(result.took_ms, 1),
        "note": result.note, "index_age": result.index_age, "stale_documents": result.stale_documents,
        "hits": [hit_row(h) for h in result.hits],
    }  # fmt: skip


def _stitched(chunks: list[Chunk]) -> str:
    """The stored passages joined at their offsets (overlaps once): the text when the file
    cannot give it as it was indexed."""
    out: list[str] = []
    pos = chunks[0].char_start
    for c in chunks:
        if c.char_start > pos:
            out.append("\n")
            pos = c.char_start
        if c.char_end > pos:
            out.append(c.text[pos - c.char_start :])
            pos = c.char_end
    return "".join(out)


def reader_payload(shelf: Shelf, chunk_id: str, before: int, after: int) -> dict[str, Any]:
    """The document around a passage: its lines (whole lines where that stays small), where the
    passage and its neighbours lie in them, and for a PDF the whole cited page's text."""
    everything = shelf.read_passage(chunk_id, 1_000_000, 1_000_000)
    doc = everything.document
    chunks = [p.chunk for p in everything.passages]
    i = next(n for n, p in enumerate(everything.passages) if p.is_target)
    target = chunks[i]
    lo, hi = max(0, i - before), min(len(chunks), i + after + 1)
    if doc.path.lower().endswith(".pdf") and target.page is not None:  # the whole page, at least
        on_page = [n for n, c in enumerate(chunks) if c.page == target.page]
        lo, hi = min(lo, on_page[0]), max(hi, on_page[-1] + 1)
    window = chunks[lo:hi]
    first, last = window[0], window[-1]
    start, end = first.char_start, max(c.char_end for c in window)
    got = shelf.read_range(doc, lines=(first.line_start, last.line_end), max_tokens=READER_TOKENS)
    if not got.char_start <= target.char_start < max(got.char_end, got.char_start + 1):
        # a long line: its start is too far from the passage for the lines to fit
        got = shelf.read_range(doc, chars=(start, end), max_tokens=READER_TOKENS)
    text, base, line, note, source = got.text, got.char_start, got.line_start, got.note, got.source
    shown = text[target.char_start - base : target.char_end - base]
    if target.char_start < base or not shown or not target.text.startswith(shown):
        text, base, line, source = _stitched(window), first.char_start, first.line_start, "index"
        note = "the file changed since it was indexed: this is the text as it was indexed"
    long = got.rest is not None or len(text) > READER_CHARS
    if len(text) > READER_CHARS:  # a passage of megabytes (a 10 MB line is one word to the chunker)
        cut = max(0, min(target.char_start - base - 200, len(text) - READER_CHARS))
        line += text.count("\n", 0, cut)
        text, base = text[cut : cut + READER_CHARS], base + cut
    if long:
        note = join_notes(note, f"long text: {len(text):,} characters from the passage on are shown")
    passages = [
        {
            "chunk_id": c.id, "citation": p.citation, "heading": list(c.heading_path), "page": c.page,
            "lines": [c.line_start, c.line_end], "start": max(0, c.char_start - base),
            "end": max(0, min(len(text), c.char_end - base)), "target": c.id == target.id,
        }
        for p in everything.passages[lo:hi]
        for c in [p.chunk]
    ]  # fmt: skip
    return {
        "doc": {
            "id": doc.id, "collection": doc.collection, "path": doc.path, "title": doc.title,
            "file_type": doc.file_type, "uri": document_uri(doc), "tags": list(doc.tags),
            "source_url": doc.metadata.get("source_url"), "modified": iso(doc.mtime_ns / 1e9),
        },
        "citation": everything.passages[i].citation, "chunk_id": target.id, "page": target.page,
        "pdf": doc.path.lower().endswith(".pdf"), "text": text, "first_line": line, "source": source,
        "note": note, "passages": passages, "more_before": lo > 0, "more_after": hi < len(chunks),
        "before": i - lo, "after": hi - 1 - i, "total_lines": got.total_lines,
    }  # fmt: skip


def _build(build: Any) -> dict[str, Any] | None:
    if build is None:
        return None
    return {
        "finished_at": iso(build.finished_at or build.started_at), "git_commit": build.git_commit,
        "git_dirty": build.git_dirty, "added": build.added, "updated": build.updated,
        "removed": build.removed, "unchanged": build.unchanged, "skipped": build.skipped,
    }  # fmt: skip


def status_payload(shelf: Shelf, status: Status, read_only: bool, allowed: list[str]) -> dict[str, Any]:
    from docshelf.shelf import reason_kind  # loads the indexer's report module

    groups: dict[str, list[dict[str, str]]] = {}
    for s in status.skipped:
        groups.setdefault(reason_kind(s["reason"]), []).append(s)
    skipped = [
        {"kind": kind, "count": len(rows), "files": rows[:200]}
        for kind, rows in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]
    return {
        "model": status.model, "model_state": shelf.model_state, "model_error": shelf.model_error,
        "dim": status.dim, "documents": status.documents, "chunks": status.chunks,
        "size_bytes": status.size_bytes, "data_dir": status.data_dir, "store": status.store,
        "collections": [
            {"name": c.name, "documents": c.documents, "chunks": c.chunks, "roots": c.roots,
             "last_build": _build(c.last_build)}
            for c in status.collections
        ],
        "last_build": _build(status.last_build), "skipped": skipped, "skipped_total": len(status.skipped),
        "stale": status.stale, "stale_documents": status.stale_documents, "new_files": status.new_files,
        "index_age": status.index_age, "read_only": read_only, "allowed": allowed,
    }  # fmt: skip


def empty_status(message: str, read_only: bool, allowed: list[str]) -> dict[str, Any]:
    """The shelf before anything is indexed: the same shape, nothing in it, and what to do."""
    return {
        "empty": True, "message": message, "model": None, "model_state": "not loaded", "model_error": None,
        "dim": None, "documents": 0, "chunks": 0, "size_bytes": 0, "data_dir": None, "store": None,
        "collections": [], "last_build": None, "skipped": [], "skipped_total": 0, "stale": [],
        "stale_documents": 0, "new_files": 0, "index_age": None, "read_only": read_only, "allowed": allowed,
    }  # fmt: skip
