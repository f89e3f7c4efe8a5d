"""The analysis of hits kept between searches (search/hitterms.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docshelf.analyze import Analyzer, Token
from docshelf.runtime import Runtime
from docshelf.search.hitterms import HitTerms
from docshelf.types import contextual_text


class CountingAnalyzer(Analyzer):
    def __init__(self) -> None:
        super().__init__()
        self.analysed: list[str] = []

    def tokens(self, text: str) -> list[Token]:
        self.analysed.append(text)
        return super().tokens(text)


def test_a_text_is_analysed_once_and_answers_as_the_analyzer_does() -> None:
    analyzer = CountingAnalyzer()
    cache = HitTerms(analyzer, size=2)
    text = "Die Hintergrundaufgaben laufen nachts; the pager escalates to on-call."
    assert cache.tokens(text) == Analyzer().tokens(text)
    assert cache.tokens(text) == Analyzer().tokens(text)
    assert analyzer.analysed == [text]
    heading = ("Runbooks", "Paging")
    assert cache.context("On-call guide", heading) == set(
        Analyzer().terms(contextual_text("On-call guide", heading, ""))
    )


def test_the_least_recently_used_text_goes_first() -> None:
    analyzer = CountingAnalyzer()
    cache = HitTerms(analyzer, size=2)
    for text in ("alpha one", "beta two", "alpha one", "gamma three", "alpha one", "beta two"):
        cache.tokens(text)
    # "beta two" was the oldest when "gamma three" came, so it was analysed again at the end
    assert analyzer.analysed == ["alpha one", "beta two", "gamma three", "beta two"]


@pytest.mark.usefixtures("backend")  # the embedded store and PostgreSQL
def test_a_repeated_search_reuses_its_hits_analysis_and_an_edit_is_seen(
    runtime: Runtime, corpus: Path
) -> None:
    runtime.indexer().sync("test", [corpus])
    searcher = runtime.searcher()
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
    runtime.indexer().sync("test", [corpus])
    edited = searcher.search("zebras rollout deploy checklist", k=5, mode="keyword")
    assert any("**zebras**" in h.snippet for h in edited.hits)
