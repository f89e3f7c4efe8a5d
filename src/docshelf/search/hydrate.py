"""From ranked chunk ids to hits: the chunks read, snippets and matched words made, copies folded.

A passage found in several places (a file and its copy, a paragraph repeated in two documents) is
one hit: the first place ranked keeps it and lists the others in ``also_in``, so the ``k`` hits
are ``k`` different passages. Identical text scores alike on both sides, so its places rank next
to each other; those among the chunks read for the hits are all listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docshelf.analyze import Token
from docshelf.search.headings import bare_headings_last
from docshelf.search.hitterms import HitTerms
from docshelf.search.results import Duplicate, Hit
from docshelf.search.snippets import heading_line_end, make_snippet
from docshelf.store.base import DocumentRecord, Store
from docshelf.types import Chunk, cite

__all__ = ["Asked", "Reads", "hydrate"]


class Reads:
    """The chunks one search has read: those read for its first keyword hits (while the query
    embeds) and its other-language check are not read again for its hits."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.seen: dict[str, Chunk] = {}

    def chunks(self, ids: Sequence[str]) -> list[Chunk]:
        """Those of ``ids`` that exist, in that order."""
        missing = [cid for cid in ids if cid not in self.seen]
        if missing:
            self.seen.update((c.id, c) for c in self.store.get_chunks(missing))
        return [self.seen[cid] for cid in ids if cid in self.seen]


@dataclass
class Asked:
    """The query as typed, its analysed tokens, and the alternatives of its words."""

    query: str
    tokens: list[Token]
    alternatives: dict[str, list[str]] = field(default_factory=dict)


def _matched_words(query: str, qtokens: list[Token], have: set[str]) -> list[str]:
    """The query's words (as typed) whose terms the hit contains; a CJK run's pieces as one word."""
    spans: list[list[int]] = []
    for t in sorted(qtokens, key=lambda t: (t.start, t.end)):
        if t.term not in have:
            continue
        if spans and t.start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], t.end)
        else:
            spans.append([t.start, t.end])
    return list(dict.fromkeys(query[s:e] for s, e in spans))


def _page_label(metadata: dict[str, Any], page: int | None) -> str | None:
    """The label a PDF prints on ``page`` ("iv", "A-3"), from the document's page labels: a reader
    looks for the number on the page, which is not its position in the file."""
    labels = metadata.get("page_labels")
    if not page or not isinstance(labels, list) or not 0 < page <= len(labels):
        return None
    return str(labels[page - 1])


def _duplicate(chunk: Chunk, doc: DocumentRecord) -> Duplicate:
    source_url = doc.metadata.get("source_url")
    return Duplicate(
        chunk_id=chunk.id, doc_id=doc.id, collection=doc.collection, path=doc.path,
        line_start=chunk.line_start, line_end=chunk.line_end, page=chunk.page,
        citation=cite(doc.path, chunk.line_start, chunk.line_end, chunk.page, source_url),
    )  # fmt: skip


def hydrate(
    store: Store, hit_terms: HitTerms, fused: list[tuple[str, float]],
    lists: dict[str, list[tuple[str, float]]], asked: Asked, k: int, snippets: bool, reads: Reads,
    collapse: bool = True,
) -> tuple[list[Hit], list[float]]:  # fmt: skip
    """The top ``k`` hits, and the share of the query's distinct terms each one contains (a term
    counts as contained when one of its alternatives is); ``collapse``: copies of a passage fold
    into the first."""
    own = {t.term for t in asked.tokens}
    # a word's alternatives stand at its place: its snippet marks and matched word as typed
    stand_ins = [Token(a, t.start, t.end) for t in asked.tokens for a in asked.alternatives.get(t.term, ())]
    qtokens = [*asked.tokens, *stand_ins]
    query_terms = {t.term for t in qtokens}
    shares: list[float] = []
    ranks = {name: {cid: r for r, (cid, _) in enumerate(lst, 1)} for name, lst in lists.items()}
    # over-fetch: a hit may point to a chunk deleted since the keyword index was read, or fold
    window = k * 2
    chunks = {c.id: c for c in reads.chunks([cid for cid, _ in fused[:window]])}
    # one query (one round trip on PostgreSQL) for the documents of the hits
    docs = store.get_documents([c.doc_id for c in chunks.values()])
    fused = bare_headings_last(fused[:window], chunks, ranks.get("keyword", {})) + fused[window:]
    hits: list[Hit] = []
    shown: dict[str, Hit] = {}  # passage text -> its hit
    read = window
    for i, (cid, score) in enumerate(fused):
        if i == read:  # copies were folded: read the next stretch
            if len(hits) >= k:
                break
            more = reads.chunks([c for c, _ in fused[read : read + window]])
            chunks.update((c.id, c) for c in more)
            docs.update(store.get_documents([c.doc_id for c in more if c.doc_id not in docs]))
            read += window
        chunk = chunks.get(cid)
        doc = docs.get(chunk.doc_id) if chunk is not None else None
        if chunk is None or doc is None:
            continue
        if collapse and (first := shown.get(chunk.text)) is not None:
            first.also_in.append(_duplicate(chunk, doc))
            continue
        if len(hits) >= k:
            if not collapse:
                break
            continue  # only copies of the hits shown are looked for now, among the chunks read
        tokens = hit_terms.tokens(chunk.text)
        # the keyword index holds the title and headings too: a word found only there matched
        have = {t.term for t in tokens}.union(hit_terms.context(doc.title, chunk.heading_path))
        skip = heading_line_end(chunk.text, chunk.heading_path[-1] if chunk.heading_path else None)
        # code keeps its lines: flowed into one, a function reads as a run of words
        code = "language" in doc.metadata
        found = make_snippet(tokens, chunk.text, query_terms, skip=skip, lines=code) if snippets else None
        hit = Hit(
            chunk_id=cid, doc_id=doc.id, collection=doc.collection, path=doc.path,
            abs_path=str(Path(doc.root) / doc.path), title=doc.title,
            heading_path=list(chunk.heading_path), line_start=chunk.line_start,
            line_end=chunk.line_end, char_start=chunk.char_start, char_end=chunk.char_end,
            page=chunk.page, score=score,
            ranks={name: r[cid] for name, r in ranks.items() if cid in r},
            snippet="" if found is None else found.text,
            text=chunk.text,
            tags=list(doc.tags), lifecycle=doc.lifecycle,
            source_url=doc.metadata.get("source_url"),
            page_label=_page_label(doc.metadata, chunk.page),
            matched=_matched_words(asked.query, qtokens, have),
            highlights=[] if found is None else found.spans,
            snippet_window=None if found is None else found.window,
            snippet_cut=(False, False) if found is None else found.cut,
        )  # fmt: skip
        hits.append(hit)
        shown[chunk.text] = hit
        present = sum(t in have or not have.isdisjoint(asked.alternatives.get(t, ())) for t in own)
        shares.append(present / max(1, len(own)))
    return hits, shares
