"""Retrieve, prompt with numbered passages, call the LLM, map its [n] citations back to chunks.

Two steps so a server can run retrieval under its store lock and the (slow) LLM call outside it.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from docshelf.answer.llm import ChatClient
from docshelf.answer.prompt import SYSTEM, build_prompt, cited_numbers, location
from docshelf.config import AnswerSettings
from docshelf.dsn import redact_dsn

if TYPE_CHECKING:
    from docshelf.search.rerank import Reranker
    from docshelf.search.searcher import Hit, Searcher
    from docshelf.store.base import SearchFilter

__all__ = ["Answer", "Retrieved", "SourcePassage", "compose", "retrieve"]


@dataclass
class SourcePassage:
    """One numbered passage of the prompt, with everything needed to cite and re-read it."""

    number: int
    chunk_id: str
    path: str
    line_start: int
    line_end: int
    page: int | None
    location: str  # path:start-end, or path#page=N for paged files
    citation: str  # as search gives it: path:start-end (page N)
    heading_path: list[str]
    score: float
    text: str

    @classmethod
    def of(cls, number: int, hit: Hit) -> SourcePassage:
        return cls(
            number, hit.chunk_id, hit.path, hit.line_start, hit.line_end, hit.page, location(hit),
            hit.citation, list(hit.heading_path), hit.score, hit.text,
        )  # fmt: skip


@dataclass
class Retrieved:
    """The passages chosen for one question, most relevant first."""

    question: str
    hits: list[Hit]
    mode: str
    took_ms: float
    note: str | None = None


@dataclass
class Answer:
    question: str
    answer: str
    model: str
    endpoint: str
    citations: list[SourcePassage]  # the passages the answer cites, in order of first mention
    passages: list[SourcePassage]  # every passage sent, most relevant first
    retrieval_mode: str
    retrieval_ms: float
    llm_ms: float
    note: str | None = None
    unresolved: list[int] = field(default_factory=list)  # cited numbers that match no passage

    def as_dict(self, with_text: bool = True) -> dict[str, Any]:
        out = asdict(self)
        if not with_text:
            for p in out["passages"] + out["citations"]:
                p.pop("text")
        return out


def retrieve(
    searcher: Searcher, question: str, settings: AnswerSettings, flt: SearchFilter | None = None,
    reranker: Reranker | None = None, top_n: int = 30, mode: str | None = None,
) -> Retrieved:  # fmt: skip
    """The ``settings.passages`` best passages (reranked when a reranker is given)."""
    k = settings.passages
    if reranker is None:
        result = searcher.search(question, k=k, mode=mode, flt=flt, snippets=False)  # type: ignore[arg-type]
    else:
        from docshelf.search.rerank import reranked_search

        result = reranked_search(searcher, reranker, question, k, top_n, mode, flt, snippets=False)  # type: ignore[arg-type]
    return Retrieved(question, list(result.hits), result.mode, result.took_ms, result.note)


def compose(found: Retrieved, client: ChatClient, settings: AnswerSettings) -> Answer:
    """Ask the LLM over ``found``; with no passages it is not called at all."""
    passages = [SourcePassage.of(n, h) for n, h in enumerate(found.hits, start=1)]
    shown = redact_dsn(client.endpoint)  # an endpoint's user:password@ is never printed
    if not passages:
        why = found.note or "no passage matched"
        return Answer(
            found.question, "", client.name, shown, [], [], found.mode, found.took_ms, 0.0,
            note=f"{why}; the LLM was not asked",
        )  # fmt: skip
    started = time.perf_counter()
    text = client.complete(SYSTEM, build_prompt(found.question, found.hits, settings.max_passage_chars))
    llm_ms = (time.perf_counter() - started) * 1000
    cited, unresolved = cited_numbers(text, len(passages))
    note: str | None = None
    if unresolved:
        note = f"the answer cites passage numbers that were not given: {unresolved}"
    elif not cited:
        note = "the answer cites no passage: check it against the passages before relying on it"
    return Answer(
        found.question, text, client.name, shown, [passages[n - 1] for n in cited], passages,
        found.mode, found.took_ms, llm_ms, note, unresolved,
    )  # fmt: skip
