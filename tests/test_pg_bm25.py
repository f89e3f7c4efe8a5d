"""PostgreSQL keyword search that reads part of each posting list must give the full scan's top k."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from docshelf.config import load_settings
from docshelf.embed import HashEmbedder
from docshelf.runtime import Runtime
from docshelf.store.base import SearchFilter
from docshelf.store.postgres import bm25
from docshelf.store.postgres.sql import keyword_sql

WORDS = [
    "deploy",
    "rollback",
    "incident",
    "pager",
    "vault",
    "backup",
    "restore",
    "budget",
    "release",
    "canary",
    "alert",
    "owner",
]


@pytest.fixture
def indexed(pg_database: str, tmp_path: Path) -> Any:
    rng = random.Random(5)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(120):  # words with skewed frequencies and lengths: ties, long and short chunks
        words = rng.choices(WORDS, weights=range(len(WORDS), 0, -1), k=rng.randint(3, 40))
        (corpus / f"n{i:03d}.txt").write_text(" ".join(words) + f" uniq{i % 17}\n", "utf-8")
    s = load_settings(collection="test")
    s.store.data_dir = tmp_path / "data"
    s.store.url = pg_database
    s.embed.model = "hash"
    with Runtime(s, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [corpus])
        yield rt


def _full(rt: Runtime, terms: list[str], k: int, flt: SearchFilter) -> list[tuple[str, float]]:
    params: dict[str, Any] = {"k": k, "terms": terms}
    rows = rt.store._q(keyword_sql(flt, params), params)  # type: ignore[attr-defined]
    return sorted([(cid, float(score)) for cid, score in rows], key=lambda h: -h[1])


def _same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    # ties may come in either order: equal score sequences, and equal id sets above the last score
    if [round(s, 9) for _, s in a] != [round(s, 9) for _, s in b]:
        return False
    last = round(a[-1][1], 9) if a else 0.0
    return {c for c, s in a if round(s, 9) > last} == {c for c, s in b if round(s, 9) > last}


def test_partial_reads_give_the_exact_top_k(indexed: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    used: dict[str, int] = {"fixup": 0, "full": 0, "first": 0}
    original_resolve = bm25.resolve

    def counting(p: bm25.Pass, extra: dict[int, float], fixed: set[int]) -> Any:
        found = original_resolve(p, extra, fixed)
        used["full" if found is None else ("fixup" if fixed else "first")] += 1
        return found

    monkeypatch.setattr(bm25, "resolve", counting)
    for per_term in (2, 5, 25):  # postings read per term: most lists are cut short
        monkeypatch.setattr(bm25, "PER_TERM", per_term)
        rng = random.Random(per_term)
        for _ in range(30):
            words = rng.sample([*WORDS, "uniq3", "uniq11"], rng.randint(1, 4))
            terms = indexed.analyzer.terms(" ".join(words))
            for k in (1, 3, 10):
                for flt in (SearchFilter(), SearchFilter(collections=("test",))):
                    got = indexed.store.keyword_search(terms, k, flt)
                    assert _same(got, _full(indexed, terms, k, flt)), (terms, k, per_term)
    assert all(used.values()), used  # exact from pass one, after a fix-up, and by the full scan
