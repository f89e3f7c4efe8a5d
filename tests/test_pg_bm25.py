"""PostgreSQL keyword search over packed postings gives BM25 exactly, whatever was packed, edited or
deleted since: checked against BM25 computed here from the stored chunk texts."""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from docshelf.config import load_settings
from docshelf.embed import HashEmbedder
from docshelf.store.base import SearchFilter
from docshelf.store.postgres import postings
from docshelf.testing import Stages

WORDS = ["deploy", "rollback", "incident", "pager", "vault", "backup", "restore", "budget", "release"]


def _write(corpus: Path, rng: random.Random, i: int) -> None:
    words = rng.choices(WORDS, weights=range(len(WORDS), 0, -1), k=rng.randint(3, 40))
    (corpus / f"n{i:03d}.txt").write_text(" ".join(words) + f" uniq{i % 17}\n", "utf-8")


def _oracle(
    rt: Stages, terms: list[str], k: int, alternatives: dict[str, list[str]] | None = None
) -> list[tuple[str, float]]:
    """BM25 as tantivy and the SQL formula define it, from every stored chunk's text; a term with
    alternatives gives the best of its and their scores (those that are query terms left out)."""
    docs = {d.id: d for d in rt.store.iter_documents()}
    chunks = [(c, Counter(rt.analyzer.chunk_terms(docs[c.doc_id].title, c.heading_path, c.text)))
              for c in rt.store.iter_chunks()]  # fmt: skip
    n = len(chunks)
    avgdl = sum(sum(t.values()) for _, t in chunks) / n
    df = Counter(term for _, t in chunks for term in t)
    scores = []
    for c, tfs in chunks:
        s = 0.0

        def bm25(term: str, tfs: Counter[str] = tfs) -> float:
            tf = tfs.get(term, 0)
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            return idf * 2.2 * tf / (tf + 0.3 + 0.9 * sum(tfs.values()) / avgdl) if tf else 0.0

        for term, qtf in Counter(terms).items():
            others = [a for a in (alternatives or {}).get(term, ()) if a not in terms]
            s += qtf * max(bm25(a) for a in (term, *others))
        if s > 0:
            scores.append((c.id, s))
    return sorted(scores, key=lambda h: (-h[1], h[0]))[:k]


def _same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    # ties may come in either order: equal score sequences, and equal ids above the last score
    if [round(s, 9) for _, s in a] != [round(s, 9) for _, s in b]:
        return False
    last = round(a[-1][1], 9) if a else 0.0
    return {c for c, s in a if round(s, 9) > last} == {c for c, s in b if round(s, 9) > last}


def _check(rt: Stages, rng: random.Random) -> None:
    for _ in range(25):
        terms = rt.analyzer.terms(
            " ".join(rng.sample([*WORDS, "uniq3", "uniq11", "nowhere"], rng.randint(1, 4)))
        )
        # a word typed with accents: its plain spelling's stems stand in for it (search/accents.py)
        alts = {terms[0]: rt.analyzer.terms(" ".join(rng.sample(WORDS, rng.randint(1, 2))))} if terms else {}
        for k in (1, 3, 10):
            for flt in (SearchFilter(), SearchFilter(collections=("test",))):
                assert _same(rt.store.keyword_search(terms, k, flt), _oracle(rt, terms, k)), (terms, k)
                got = rt.store.keyword_search(terms, k, flt, alts)
                assert _same(got, _oracle(rt, terms, k, alts)), (terms, alts, k)


def test_packed_postings_score_exactly_through_packs_edits_and_deletes(
    pg_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings, "TAIL_MIN", 40)  # pack often: blocks, tail and stale postings mix
    rng = random.Random(5)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    s = load_settings(collection="test")
    s.store.data_dir, s.store.url, s.embed.model = tmp_path / "data", pg_database, "hash"
    with Stages(s, embedder=HashEmbedder()) as rt:
        store: Any = rt.store
        for i in range(60):
            _write(corpus, rng, i)
        rt.indexer().sync("test", [corpus])
        assert store._one("SELECT count(*) FROM posting_blocks")[0] > 0  # the tail was packed
        _check(rt, rng)
        for i in range(0, 60, 3):  # edits: the old versions' packed postings go stale
            _write(corpus, rng, i)
        for i in range(1, 20, 4):
            (corpus / f"n{i:03d}.txt").unlink()
        (corpus / "n200.txt").write_text("deploy rollback freshword\n", "utf-8")  # stays in the tail
        monkeypatch.setattr(postings, "STALE_SHARE", 2.0)  # no repack yet
        rt.indexer().sync("test", [corpus])
        packed, live = store._one("SELECT packed, postings FROM corpus_stats")
        assert packed > live - store._one("SELECT count(*) FROM posting_tail")[0]  # stale ones are in
        _check(rt, rng)
        assert rt.store.keyword_search(["freshword"], 3, SearchFilter())[0][1] > 0
        monkeypatch.setattr(postings, "STALE_SHARE", 0.0)
        rt.store.commit()  # repack
        with store._pool.connection() as conn:
            assert postings.stale_share(conn) == 0.0
        _check(rt, rng)
        df = dict(store._q("SELECT term, df FROM term_stats WHERE df > 0"))
        counted = Counter(t for c in store._q("SELECT terms FROM chunks") for t in c[0])
        assert df == dict(counted)


def test_best_is_the_head_of_the_full_ranking_ties_by_seq() -> None:
    """The partial selection keeps the order a full sort gives, ties at the cut included."""
    import numpy as np

    rng = np.random.default_rng(3)
    seqs = rng.permutation(5000).astype(np.int64) + 10
    scores = rng.integers(1, 40, 5000).astype(np.float64) / 7  # many ties
    order = np.lexsort((seqs, -scores))
    for n in (1, 10, 216, 4999, 5000, 9000):
        top, values = postings.best(seqs, scores, n)
        assert top.tolist() == seqs[order][:n].tolist()
        assert values.tolist() == scores[order][:n].tolist()


def test_keyword_ranking_matches_the_embedded_store_over_all_candidates(
    pg_database: str, tmp_path: Path
) -> None:
    """The same short documents in both stores: the same hits over the whole candidate list, in
    the same order wherever PostgreSQL's scores differ by more than 2% (tantivy's document count
    includes its generation marker, which moves every idf a little)."""
    rng = random.Random(11)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(80):
        words = rng.choices(WORDS, weights=range(len(WORDS), 0, -1), k=rng.randint(2, 14))
        (corpus / f"n{i:03d}.txt").write_text(" ".join(words) + f" uniq{i % 13}\n", "utf-8")
    texts = [" ".join(rng.sample([*WORDS, "uniq3", "uniq7"], rng.randint(1, 4))) for _ in range(30)]
    ranked = []
    for url in (None, pg_database):
        s = load_settings(collection="test")
        s.store.data_dir, s.store.url, s.embed.model = tmp_path / f"data-{bool(url)}", url, "hash"
        with Stages(s, embedder=HashEmbedder()) as rt:
            # keyword side only: each embedding batch commits tantivy again, and each commit leaves
            # a deleted generation marker that counts in its document total until a merge
            rt.indexer().sync("test", [corpus], keyword_only=True)
            queries = [rt.analyzer.terms(t) for t in texts]
            alts = [
                {q[0]: rt.analyzer.terms(WORDS[i % len(WORDS)])} if i % 2 else {}
                for i, q in enumerate(queries)
            ]
            ranked.append([
                rt.store.candidates(q, None, 200, SearchFilter(), alternatives=a)[0]["keyword"]
                for q, a in zip(queries, alts, strict=True)
            ])  # fmt: skip
    for embedded, pg in zip(*ranked, strict=True):
        assert len(pg) > 0 and {c for c, _ in embedded} == {c for c, _ in pg}
        where = {c: i for i, (c, _) in enumerate(embedded)}
        for i, (a, sa) in enumerate(pg):
            assert all(where[a] < where[b] for b, sb in pg[i + 1 :] if sa > sb * 1.02), (a, pg, embedded)
