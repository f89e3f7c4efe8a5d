"""The analysis of hits kept between searches (search/hitterms.py)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from docshelf.analyze import Analyzer, Token
from docshelf.search.hitterms import HitTerms
from docshelf.testing import Stages


class CountingAnalyzer(Analyzer):
    def __init__(self) -> None:
        super().__init__()
        self.analysed: list[str] = []

    def tokens(self, text: str, also: Sequence[str] = (), passage: bool = False) -> list[Token]:
        self.analysed.append(text)
        return super().tokens(text, also, passage)


def test_a_text_is_analysed_once_and_answers_as_the_analyzer_does() -> None:
    analyzer = CountingAnalyzer()
    cache = HitTerms(analyzer, size=2)
    text = "Die Hintergrundaufgaben laufen nachts über Café-Server; the pager escalates to on-call."
    # a hit is analysed as the keyword index holds it: a passage (`cafe` meets `Café`)
    assert cache.tokens(text) == Analyzer().tokens(text, passage=True)
    assert cache.tokens(text) == Analyzer().tokens(text, passage=True)
    assert "cafe" in {t.term for t in cache.tokens(text)}
    assert analyzer.analysed == [text]
    heading = ("Runbooks", "Paging")
    assert cache.context("On-call guide", heading) == set(
        Analyzer().chunk_terms("On-call guide", heading, "")
    )


def test_the_least_recently_used_text_goes_first() -> None:
    analyzer = CountingAnalyzer()
    cache = HitTerms(analyzer, size=2)
    for text in ("alpha one", "beta two", "alpha one", "gamma three", "alpha one", "beta two"):
        cache.tokens(text)
    # "beta two" was the oldest when "gamma three" came, so it was analysed again at the end
    assert analyzer.analysed == ["alpha one", "beta two", "gamma three", "beta two"]


@pytest.mark.usefixtures("backend")  # the embedded store and PostgreSQL
def test_a_repeated_search_reuses_its_hits_analysis_and_an_edit_is_seen(stages: Stages, corpus: Path) -> None:
    stages.indexer().sync("test", [corpus])
    searcher = stages.searcher()
    analyzer = CountingAnalyzer()
    searcher.hit_terms = HitTerms(analyzer)
    query = "how do we roll out a deploy"
    first = searcher.search(query, k=5, mode="keyword")
    analysed = len(analyzer.analysed)
    again = searcher.search(query, k=5, mode="keyword")
    assert first.hits and analysed >= len(first.hits)
    assert len(analyzer.analysed) == analysed  # nothing analysed the second time
    assert [(h.chunk_id, h.snippet, h.matched, h.highlights) for h in again.hits] == [
        (h.chunk_id, h.snippet, h.matched, h.highlights) for h in first.hits
    ]

    top = first.hits[0]
    page = Path(top.abs_path)
    page.write_text(page.read_text(encoding="utf-8") + "\n\nA rollout deploy checklist: zebras first.\n",
                    encoding="utf-8")  # fmt: skip
    stages.indexer().sync("test", [corpus])
    edited = searcher.search("zebras rollout deploy checklist", k=5, mode="keyword")
    assert any("**zebras**" in h.snippet for h in edited.hits)


@pytest.mark.usefixtures("backend")
def test_keyword_hits_are_analysed_while_the_query_embeds(stages: Stages, corpus: Path) -> None:
    """The main thread only waits for the vector once the keyword side is done: it analyses the
    first keyword hits meanwhile, and the result is the one a search without the overlap gives."""
    stages.indexer().sync("test", [corpus])
    in_process = stages.settings.store.backend != "postgres"  # PostgreSQL wants the vector first
    analysed = threading.Event()
    seen: list[bool] = []

    class Signalling(CountingAnalyzer):
        def tokens(self, text: str, also: Sequence[str] = (), passage: bool = False) -> list[Token]:
            out = super().tokens(text, also, passage)
            analysed.set()
            return out

    embedder = stages.embedder
    embed_query = embedder.embed_query

    def slow_embed(text: str) -> Any:
        if in_process:  # the vector is ready only once a hit was analysed (or after 10 s: a failure)
            seen.append(analysed.wait(10))
        return embed_query(text)

    embedder.embed_query = slow_embed  # type: ignore[method-assign]
    searcher = stages.searcher()
    searcher.hit_terms = HitTerms(Signalling())
    query = "how do we roll out a deploy"
    together = searcher.search(query, k=5)
    analysed_ahead = list(searcher.hit_terms.analyzer.analysed)  # type: ignore[attr-defined]
    stages.settings.search.parallel_query = False
    apart = stages.searcher().search(query, k=5)
    assert seen[:1] == ([True] if in_process else [])  # the overlapped search's embedding
    keyword_first = stages.searcher().search(query, k=5, mode="keyword").hits[0].text
    assert not in_process or analysed_ahead[0] == keyword_first
    assert together.hits and [(h.chunk_id, h.score, h.snippet, h.highlights) for h in together.hits] == [
        (h.chunk_id, h.score, h.snippet, h.highlights) for h in apart.hits
    ]


@pytest.mark.usefixtures("backend")
def test_a_search_reads_each_chunk_from_the_store_once(stages: Stages, corpus: Path) -> None:
    """The chunks read while the query embeds and for the other-language check are the hits'
    chunks too: reading them again cost each search a second store query (~0.2 ms at 100k)."""
    stages.indexer().sync("test", [corpus])
    in_process = stages.settings.store.backend != "postgres"  # PostgreSQL wants the vector first
    embedder = stages.embedder
    embed_query = embedder.embed_query
    started = threading.Event()

    def slow_embed(text: str) -> Any:
        if in_process:
            started.wait(10)  # the keyword hits are read meanwhile (a failure, not a pause, if not)
        return embed_query(text)

    embedder.embed_query = slow_embed  # type: ignore[method-assign]
    searcher = stages.searcher()
    store: Any = searcher.store
    get_chunks = store.get_chunks
    asked: list[str] = []

    def counting(ids: Any) -> Any:
        asked.extend(ids)
        started.set()
        return get_chunks(ids)

    store.get_chunks = counting
    try:
        for query in ("how do we roll out a deploy", "page the on-call engineer", "Urlaub beantragen"):
            asked.clear()
            started.clear()
            result = searcher.search(query, k=5)
            assert result.hits
            twice = {cid for cid in asked if asked.count(cid) > 1}
            assert not twice, f"{query!r}: {len(twice)} chunks read twice"
    finally:
        store.get_chunks = get_chunks
