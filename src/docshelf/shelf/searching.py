"""`search` and `ask`: the searcher with the model when it is ready, reranking, confidence floors,
and each result stamped with how fresh the index is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from docshelf.shelf.types import SearchRequest

if TYPE_CHECKING:
    from docshelf.answer import Answer
    from docshelf.search.results import SearchResult
    from docshelf.shelf.parts import Parts

__all__ = ["ask", "join_notes", "search"]


def join_notes(*notes: str | None) -> str | None:
    """Notes joined with "; ", None when there is none."""
    return "; ".join(n for n in notes if n) or None


def search(parts: Parts, req: SearchRequest) -> SearchResult:
    """One search as ``req`` asks; keyword-only (said in the note) while the model is not ready."""
    from docshelf.search.confidence import coverage_note, vector_counts

    settings = parts.settings
    mode = req.mode or settings.search.mode
    flt = req.filter()
    # counted once, for the searcher too: when none of the chunks has its vector yet (an `index
    # --keyword-only`, a big first index's first minutes), a hybrid search is the keyword search,
    # and the model is neither loaded nor asked for a query vector nothing could be compared with
    counted = vector_counts(parts.store, flt.collections) if mode == "hybrid" else None
    if counted is not None and counted[0] and counted[0] >= counted[1]:
        embedder, model_note = None, coverage_note(*counted)  # keyword alone, and why
    elif mode == "keyword":
        embedder, model_note = None, None
    else:
        embedder, model_note = parts.embedder(req.model_wait_s)
    reranker = parts.reranker(req.rerank)
    searcher = parts.searcher(embedder)
    k = req.k or settings.search.k
    if reranker is None:
        result = searcher.search(req.query, k=k, mode=mode, flt=flt, counted=counted)
    else:
        from docshelf.search.rerank import reranked_search

        top_n = settings.rerank.top_n
        result = reranked_search(searcher, reranker, req.query, k, top_n, mode, flt, counted=counted)
    result.note = join_notes(result.note, model_note)
    if req.min_confidence and result.hits:
        best = max(h.confidence for h in result.hits)
        result.hits = [h for h in result.hits if h.confidence >= req.min_confidence]
        if not result.hits:
            result.note = join_notes(
                f"no hit reached min_confidence {req.min_confidence:g} (the best had {best:.2f}): "
                "the documents may not answer this; try other words or a lower min_confidence",
                result.note,
            )
    fresh = parts.tracker().summary()
    result.index_age, result.stale_documents = fresh["index_age"], fresh["stale_documents"]
    return result


def ask(
    parts: Parts, question: str, passages: int | None, collections: Sequence[str], path_glob: str | None,
    tags: Sequence[str], rerank: bool | None, model_wait_s: float | None,
) -> Answer:  # fmt: skip
    """An answer from the configured LLM (``answer.*``) over the best passages, with citations."""
    from docshelf.answer import compose, create_client, retrieve

    answer = parts.settings.answer
    cfg = answer.model_copy(update={"passages": passages}) if passages else answer
    client = create_client(cfg)  # a missing model or key fails here, before any work
    reranker = parts.reranker(cfg.rerank if rerank is None else rerank)
    embedder, model_note = parts.embedder(model_wait_s)
    searcher = parts.searcher(embedder)
    req = SearchRequest(question, collections=tuple(collections), path_glob=path_glob, tags=tuple(tags))
    found = retrieve(searcher, question, cfg, req.filter(), reranker, parts.settings.rerank.top_n)
    result = compose(found, client, cfg)
    result.note = join_notes(result.note, model_note)
    return result
