"""Fusion, filters, snippets and empty-result notes."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from docshelf.analyze import Analyzer
from docshelf.config import Settings
from docshelf.search import weighted_rrf
from docshelf.search.fusion import convex_combination, zscore_combination
from docshelf.search.snippets import make_snippet
from docshelf.shelf import Shelf
from docshelf.store.base import SearchFilter
from docshelf.testing import Stages

# the same tests run against the embedded store and PostgreSQL + pgvector
pytestmark = pytest.mark.usefixtures("backend")


def test_weighted_rrf_rewards_agreement_and_weights() -> None:
    kw = [("a", 9.0), ("b", 5.0), ("c", 1.0)]
    sem = [("b", 0.9), ("c", 0.8)]
    fused = [i for i, _ in weighted_rrf({"kw": kw, "sem": sem}, {"kw": 1.0, "sem": 1.0}, k=10)]
    assert fused[0] == "b"  # in both lists, high in both
    fused = [i for i, _ in weighted_rrf({"kw": kw, "sem": sem}, {"kw": 1.0, "sem": 0.0}, k=10)]
    assert fused == ["a", "b", "c"]


def test_zscore_missing_item_gets_the_list_floor() -> None:
    kw = [("a", 10.0), ("b", 9.0), ("c", 1.0)]
    sem = [("d", 0.9), ("b", 0.5), ("c", 0.1)]
    fused = dict(zscore_combination({"kw": kw, "sem": sem}, {"kw": 0.7, "sem": 0.3}))
    assert max(fused, key=fused.__getitem__) == "b"
    assert fused["d"] < fused["a"]  # strong dense-only hit loses to strong keyword-only hit at 0.7/0.3
    only_kw = zscore_combination({"kw": kw, "sem": []}, {"kw": 0.7, "sem": 0.3})
    assert [i for i, _ in only_kw] == ["a", "b", "c"]


def test_a_lone_keyword_hit_is_damped_when_the_fusion_leans_on_meaning() -> None:
    """A query in another language than the passages: one keyword hit (a shared name) got z 8.5
    and outweighed the dense side the cross-language rule trusts (xquad-en -> xquad-zh 0.8390 ->
    0.8164). The index holds one of the question's seven words: scaled by that coverage, the dense
    side's clear top hit wins; unscaled, the lone hit still does."""
    from docshelf.search.fusion import fuse_hybrid, lone_scale

    sem = [("p0", 0.85)] + [(f"p{i}", 0.75 - 0.004 * i) for i in range(1, 60)]  # p0 stands out
    kw = [("p3", 4.2)]
    weights = {"keyword": 0.2, "semantic": 0.8}
    assert zscore_combination({"keyword": kw, "semantic": sem}, weights)[0][0] == "p3"
    assert zscore_combination({"keyword": kw, "semantic": sem}, weights, lone_scale(1 / 7))[0][0] == "p0"
    lists = {"keyword": kw, "semantic": sem}
    assert fuse_hybrid(Settings().search, lists, 1 / 7, other_language=True, model_weight=0.5)[0][0] == "p0"


def test_zscore_is_the_weighted_sum_of_each_lists_z_or_its_floor() -> None:
    """The definition, id by id, on random lists: same floats, so the same order among near ties."""
    rnd = random.Random(7)
    for _ in range(300):
        ids = [f"c{i}" for i in range(rnd.randint(0, 60))]
        lists = {}
        for name in ("kw", "sem"):
            scale = rnd.choice([0, 1, 30])  # 0: every score equal (std 0)
            picked = rnd.sample(ids, rnd.randint(0, len(ids)))
            lists[name] = sorted(((i, rnd.random() * scale) for i in picked), key=lambda p: -p[1])
        weights = {"kw": rnd.random(), "sem": rnd.random()}
        z: dict[str, dict[str, float]] = {}
        floor: dict[str, float] = {}
        universe = len({i for ranked in lists.values() for i, _ in ranked})
        for name, ranked in lists.items():
            if ranked:
                scores = [s for _, s in ranked]
                mean = sum(scores) / len(scores)
                std = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5
                if std:
                    z[name] = {i: (s - mean) / std for i, s in ranked}
                    floor[name] = min(z[name].values())
                else:  # all alike: z-scored as if the candidates it lacks scored 0
                    p, a = len(ranked), universe - len(ranked)
                    z[name] = {i: (a / p) ** 0.5 if a else 0.0 for i, _ in ranked}
                    floor[name] = -((p / a) ** 0.5) if a else 0.0
        total = sum(weights[n] for n in z) or 1.0
        want = {
            i: sum(weights[n] / total * zs.get(i, floor[n]) for n, zs in z.items())
            for i in {i for zs in z.values() for i in zs}
        }
        assert zscore_combination(lists, weights) == sorted(want.items(), key=lambda kv: (-kv[1], kv[0]))


def test_a_single_keyword_hit_counts_in_the_fusion(shelf: Shelf, plain_corpus: Path) -> None:
    """The one passage holding "0.110.0" was keyword rank 1 and hybrid rank 25: a list of one hit
    standardised to z = 0 (its floor too), and a query without letters counted as Chinese, so
    the dense side took over as for another language."""
    from docshelf.analyze.language import language_of, same_language

    assert language_of("0.110.0") == "none" and same_language("none", "english")
    assert same_language("han", "none") and not same_language("han", "english")
    dense = [(f"b{i}", 0.9 - i / 50) for i in range(20)] + [("a", 0.4)]  # a real list's length
    assert zscore_combination({"kw": [("a", 7.0)], "sem": dense}, {"kw": 0.5, "sem": 0.5})[0][0] == "a"
    (plain_corpus / "notes" / "upgrade.md").write_text(
        "# Upgrade\n\nWe moved to FastAPI 0.110.0 and errors now answer HTTP 422.\n", encoding="utf-8"
    )
    shelf.index([plain_corpus], "test")
    for query in ("0.110.0", "422"):
        hits = shelf.search(query, mode="hybrid", k=5).hits
        assert hits and hits[0].path == "notes/upgrade.md", query


def test_convex_normalises_scales() -> None:
    fused = convex_combination({"kw": [("a", 100.0), ("b", 0.0)], "sem": [("b", 1.0), ("a", 0.0)]},
                               {"kw": 0.5, "sem": 0.5})  # fmt: skip
    assert fused[0][1] == fused[1][1] == 0.5


def test_snippet_highlights_matches_in_window() -> None:
    analyzer = Analyzer()
    text = "Unrelated opening words. " * 20 + "The pager escalates to the secondary engineer." + " tail" * 50
    out = make_snippet(analyzer.tokens(text), text, set(analyzer.terms("pager escalation")), width=120).text
    assert "**pager**" in out and "**escalates**" in out
    assert out.startswith("…") and out.endswith("…")


def test_filters_apply_before_ranking(indexed_shelf: Shelf) -> None:
    hits = indexed_shelf.search("deploy", k=20, path_glob="runbooks/*").hits
    assert hits and {h.path for h in hits} <= {"runbooks/deploy.md", "runbooks/incident-response.md"}
    hits = indexed_shelf.search("headings sentence case", k=20, file_types="rst").hits
    assert hits and {h.path for h in hits} == {"archive/style-guide.rst"}
    assert not indexed_shelf.search("deploy", collections="other").hits


def test_date_filters_apply_before_ranking(stages: Stages, corpus: Path) -> None:
    """The searcher's modified_after/modified_before (not a Shelf option)."""
    old = corpus / "runbooks" / "deploy.md"
    os.utime(old, (time.time() - 86400 * 30, time.time() - 86400 * 30))
    stages.indexer().sync("test", [corpus])
    s = stages.searcher()
    recent = SearchFilter(modified_after=time.time() - 86400)
    assert all(h.path != "runbooks/deploy.md" for h in s.search("deploy rolling out", k=20, flt=recent).hits)
    older = SearchFilter(modified_before=time.time() - 86400 * 7)
    assert {h.path for h in s.search("deploy rolling out", k=20, flt=older).hits} == {"runbooks/deploy.md"}


def test_hits_carry_full_citations(indexed_shelf: Shelf, corpus: Path) -> None:
    hit = indexed_shelf.search("escalates to the secondary", k=1).hits[0]
    source = (corpus / hit.path).read_text(encoding="utf-8")
    assert source[hit.char_start : hit.char_end] == hit.text
    assert hit.heading_path == ["Incident response runbook", "Paging the on-call engineer"]
    assert hit.citation == f"runbooks/incident-response.md:{hit.line_start}-{hit.line_end}"
    assert set(hit.ranks) == {"keyword", "semantic"} and hit.title == "Incident response runbook"


def test_empty_results_say_why(shelf: Shelf, plain_corpus: Path) -> None:
    assert "index is empty" in (shelf.search("anything").note or "")
    shelf.index([plain_corpus], "test")
    assert "filters" in (shelf.search("deploy", tags="nope").note or "")
    assert "hold no documents" in (shelf.search("deploy", collections="x").note or "")
    assert "no searchable words" in (shelf.search("the of", mode="keyword").note or "")
    # punctuation alone found "hits" by meaning with no note; only stop words: hits, and a note
    for mode in ("hybrid", "semantic"):
        punct = shelf.search("?!.,;:", mode=mode)
        assert punct.hits == [] and "no searchable words" in (punct.note or ""), mode
        common = shelf.search("is the of a", mode=mode)
        assert common.hits and "only common words" in (common.note or ""), mode


def test_a_zero_query_vector_has_no_neighbours(stages: Stages, corpus: Path) -> None:
    """pgvector's cosine distance to a zero vector is NaN: scores NaN (bare NaN in --json) and
    confidence 1.00 on every hit, on PostgreSQL only."""
    import numpy as np

    stages.indexer().sync("test", [corpus])
    zero = np.zeros(stages.embedder.dim, dtype=np.float32)
    lists, _ = stages.store.candidates(["deploy"], zero, 10, SearchFilter())
    assert lists["semantic"] == [] and lists["keyword"]


def test_ann_index_matches_exact_search_and_follows_changes(settings, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    """Above the threshold the HNSW index answers; it must agree with the exact scan."""
    import pytest

    from docshelf.embed import HashEmbedder
    from docshelf.store.embedded.ann import ann_available, read_meta

    if not ann_available():  # (not importorskip: onnxruntime must be imported before usearch)
        pytest.skip("usearch is not installed")

    settings.search.ann_threshold = 1  # every store is "large"
    for i in range(60):
        (corpus / "notes" / f"extra{i}.md").write_text(f"# Extra {i}\n\nfiller {i} about topic {i % 7}\n")
    rt = Stages(settings, embedder=HashEmbedder())
    if settings.store.url:
        try:
            _pgvector_hnsw_matches_exact(rt, corpus)
        finally:
            rt.close()
        return
    try:
        rt.indexer().sync("test", [corpus])
        data = settings.store.data_dir
        meta = read_meta(data)
        assert meta is not None and (data / meta.file).is_file()
        dense = rt.store._dense()  # type: ignore[attr-defined]
        assert dense.ann is not None and len(dense.ann) == meta.count == rt.store.stats().chunks
        assert len(dense.exact) == 0  # every vector is in the saved index
        query = rt.embedder.embed_query("page the on-call engineer")
        ann_hits = [c for c, _ in rt.store.vector_search(query, 5, SearchFilter())]
        assert len(set(ann_hits) & {c for c, _ in _exact_top(data, query, 5)}) >= 4
        before = len(dense.ann)
        (corpus / "runbooks" / "incident-response.md").unlink()
        rt.indexer().sync("test", [corpus])
        dense = rt.store._dense()  # type: ignore[attr-defined]
        # fewer than a tenth of its keys gone: the file is kept, its dead keys dropped when resolved
        assert dense.ann is not None and len(dense.ann) == before > rt.store.stats().chunks
        got = rt.store.vector_search(query, 5, SearchFilter())
        assert [round(s, 5) for _, s in got] == [round(s, 5) for _, s in _exact_top(data, query, 5)]
        assert all(h.path != "runbooks/incident-response.md" for h in rt.searcher().search("on-call").hits)
        hits = rt.searcher().search("topic", mode="semantic", flt=SearchFilter(path_glob="archive/*")).hits
        assert hits and {h.path for h in hits} == {"archive/style-guide.rst"}  # narrow filter: exact fallback
    finally:
        rt.close()


def _exact_top(data: Path, query: Any, k: int) -> list[tuple[str, float]]:
    import sqlite3

    import numpy as np

    db = sqlite3.connect(data / "docshelf.db")
    rows = db.execute(
        "SELECT c.id, v.vector FROM chunks c JOIN vectors v ON v.key = c.embed_key "
        "JOIN documents d ON d.id = c.doc_id WHERE d.lifecycle IS NOT 'superseded'"
    ).fetchall()
    db.close()
    matrix = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
    scores = matrix @ query
    return [(rows[i][0], float(scores[i])) for i in np.argsort(-scores, kind="stable")[:k]]


def _pgvector_hnsw_matches_exact(rt: Stages, corpus: Path) -> None:
    """PostgreSQL: above the threshold pgvector's HNSW index answers, agreeing with the exact scan."""
    rt.indexer().sync("test", [corpus])
    store: Any = rt.store
    query = rt.embedder.embed_query("page the on-call engineer")
    sql = "SELECT id FROM chunks ORDER BY embedding <=> %(vec)s LIMIT %(k)s"
    with store._pool.connection() as conn:
        conn.execute("SET enable_seqscan = off")  # on a table this small the planner would scan
        plan = conn.execute("EXPLAIN " + sql, {"vec": query, "k": 5}).fetchall()
        assert any("chunks_hnsw" in row[0] for row in plan)
        ann = [r[0] for r in conn.execute(sql, {"vec": query, "k": 5}).fetchall()]
        conn.execute("RESET enable_seqscan")
    store.ann_threshold = 10**9  # exact from here on
    exact = [c for c, _ in store.vector_search(query, 5, SearchFilter())]
    assert len(set(ann) & set(exact)) >= 4
    store.ann_threshold = 1
    (corpus / "runbooks" / "incident-response.md").unlink()
    rt.indexer().sync("test", [corpus])
    assert all(h.path != "runbooks/incident-response.md" for h in rt.searcher().search("on-call").hits)
    hits = rt.searcher().search("topic", mode="semantic", flt=SearchFilter(path_glob="archive/*")).hits
    assert hits and {h.path for h in hits} == {"archive/style-guide.rst"}  # iterative scan under a filter


def test_fusion_weights_shift_to_semantic_when_query_words_are_not_in_the_index() -> None:
    from docshelf.config import SearchSettings
    from docshelf.search.fusion import fusion_weights

    s = SearchSettings(semantic_weight=0.2, semantic_weight_uncovered=0.8)
    assert fusion_weights(s, 1.0) == fusion_weights(s, 0.5) == {"keyword": 0.8, "semantic": 0.2}
    assert abs(fusion_weights(s, 1.0, other_language=True)["semantic"] - 0.8) < 1e-9
    assert abs(fusion_weights(s, 0.0)["semantic"] - 0.8) < 1e-9
    assert 0.2 < fusion_weights(s, 0.25)["semantic"] < 0.8
    model_default = SearchSettings(semantic_weight_uncovered=0.8)
    assert fusion_weights(model_default, 1.0, model_weight=0.4)["semantic"] == 0.4


def test_language_of_scripts_and_languages() -> None:
    from docshelf.analyze.language import language_of

    detect = Analyzer().language
    assert language_of("How many vacation days do we get?", detect) == "english"
    assert language_of("Wie viele Urlaubstage haben die Mitarbeiter?", detect) == "german"
    assert language_of("所有生产数据库每天凌晨进行全量备份", detect) == "han"
    assert language_of("入社初日にはノートパソコンを受け取ります", detect) == "kana"
    assert language_of("입사 첫날에는 노트북과 출입 카드를 받습니다", detect) == "hangul"


def test_keyword_lead_raises_the_keyword_weight_only_when_its_top_hit_stands_out() -> None:
    from docshelf.config import SearchSettings
    from docshelf.search.fusion import hybrid_weights, keyword_lead

    # BM25 picks "a" out clearly; the dense list sees nothing special and slightly prefers "b"
    kw = [("a", 12.0), ("b", 3.0)] + [(f"k{i}", 1.0 + 0.1 * i) for i in range(8)]
    sem = [("b", 0.90)] + [(f"s{i}", 0.89 - 0.002 * i) for i in range(8)] + [("a", 0.87)]
    lists = {"keyword": kw, "semantic": sem}
    assert keyword_lead(kw, sem) > 1.3
    assert keyword_lead(sem, kw) == 1.0  # never towards the dense side
    assert keyword_lead(kw[:1], sem) == 1.0  # one candidate: no spread to judge by
    s = SearchSettings()
    assert zscore_combination(lists, hybrid_weights(s, lists, 1.0, False, 0.5))[0][0] == "a"
    # other language, or most query words unknown to the index: the dense side's rules stand
    assert abs(hybrid_weights(s, lists, 1.0, True, 0.5)["keyword"] - 0.2) < 1e-9
    assert hybrid_weights(s, lists, 0.2, False, 0.5)["keyword"] < 0.5
    s.keyword_lead = False
    assert zscore_combination(lists, hybrid_weights(s, lists, 1.0, False, 0.5))[0][0] == "b"


def test_hybrid_embeds_the_query_on_another_thread_while_the_keyword_side_searches(
    stages: Stages, corpus: Path
) -> None:
    stages.indexer().sync("test", [corpus])
    store, embedder = stages.store, stages.embedder
    order: list[str] = []
    keyword_search = store.keyword_search

    def recording_keyword(*args: Any, **kwargs: Any) -> Any:
        order.append("keyword")
        return keyword_search(*args, **kwargs)

    handed: list[list[tuple[str, float]]] = []

    def pending(keyword_hits: Sequence[tuple[str, float]] = ()) -> Any:
        order.append("vector wanted")
        handed.append(list(keyword_hits))
        return embedder.embed_query("rolling deploy")

    store.keyword_search = recording_keyword  # type: ignore[method-assign]
    lists, _ = store.candidates(["deploy"], pending, 10, SearchFilter(), keyword=True)
    # in-process: the keyword side first; PostgreSQL sends both sides in one round trip, vector first
    in_process = stages.settings.store.backend != "postgres"
    assert order == (["keyword", "vector wanted"] if in_process else ["vector wanted"])
    assert handed == [lists["keyword"] if in_process else []]  # the hits, to use the wait on
    assert lists["semantic"] and lists["keyword"]
    del store.keyword_search

    threads: list[str] = []
    embed_query = embedder.embed_query

    def recording_embed(text: str) -> Any:
        threads.append(threading.current_thread().name)
        return embed_query(text)

    embedder.embed_query = recording_embed  # type: ignore[method-assign]
    s = stages.searcher()
    together = s.search("how do we roll out a deploy", k=5)
    stages.settings.search.parallel_query = False
    apart = stages.searcher().search("how do we roll out a deploy", k=5)
    assert threads[0].startswith("docshelf-embed") and threads[1] == threading.current_thread().name
    assert [(h.chunk_id, h.score) for h in together.hits] == [(h.chunk_id, h.score) for h in apart.hits]
    assert together.hits and {r for h in together.hits for r in h.ranks} == {"keyword", "semantic"}


def test_a_search_reads_its_hits_documents_in_one_query(stages: Stages, corpus: Path) -> None:
    """On PostgreSQL each store read is a round trip: the documents behind the hits come in one."""
    stages.indexer().sync("test", [corpus])
    store = stages.store
    calls: list[str] = []
    one, many = store.get_document_by_id, store.get_documents

    def by_id(doc_id: str) -> Any:
        calls.append("one")
        return one(doc_id)

    def batch(doc_ids: Any) -> Any:
        calls.append("many")
        return many(doc_ids)

    store.get_document_by_id = by_id  # type: ignore[method-assign]
    store.get_documents = batch  # type: ignore[method-assign]
    hits = stages.searcher().search("deploy rolling out incident paging", k=8, mode="keyword").hits
    assert len({h.doc_id for h in hits}) > 1 and calls == ["many"]
    assert all(h.path and h.collection == "test" for h in hits)


def test_a_lone_keyword_hit_weighs_by_the_query_terms_the_index_holds() -> None:
    """One keyword hit holding the only one of six query terms the index knows is no answer by
    itself: it outweighed the dense side's clear first hit (`vacation days request`)."""
    from docshelf.search.fusion import lone_scale

    dense = [("policy", 0.842)] + [(f"b{i}", 0.83 - i / 500) for i in range(16)] + [("postmortem", 0.825)]
    lists = {"kw": [("postmortem", 2.9)], "sem": dense}
    weights = {"kw": 0.3, "sem": 0.7}
    assert zscore_combination(lists, weights)[0][0] == "postmortem"
    assert zscore_combination(lists, weights, lone_scale=lone_scale(1 / 6))[0][0] == "policy"
    assert lone_scale(0.5) == lone_scale(1.0) == 1.0 and lone_scale(0.25) == 0.5


def _fused_weights(
    settings: Settings, corpus: Path, monkeypatch: pytest.MonkeyPatch, weight: float, queries: tuple[str, ...]
) -> list[float]:
    """The dense share each query is fused with, for an embedder of fusion weight ``weight``."""
    import docshelf.search.searcher as searcher_module
    from docshelf.embed import HashEmbedder

    class Weighted(HashEmbedder):
        fusion_weight = weight

    seen: list[float] = []
    real = searcher_module.fuse_hybrid
    monkeypatch.setattr(
        searcher_module, "fuse_hybrid", lambda s, ls, c, o, w, *u: seen.append(w) or real(s, ls, c, o, w, *u)
    )
    settings.search.dense_feedback = False  # it fuses a short statement twice, at the same weight
    with Stages(settings, embedder=Weighted()) as rt:
        rt.indexer().sync("test", [corpus])
        for query in queries:
            rt.searcher().search(query, mode="hybrid", k=3)
    return seen


def test_a_long_statement_leans_on_the_keyword_side(
    settings: Settings, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query of many terms gives BM25 more to agree on: its dense share falls by up to 40%
    between 12 and 20 analysed terms (Bible verses, scifact train; round eleven of
    docs/benchmarks.md), a question's too (a share of its own cost the held halves, issue 44)."""
    from docshelf.analyze import Analyzer
    from docshelf.search.fusion import long_query_share

    assert long_query_share(0.5, 12) == 0.5 and long_query_share(0.5, 30) == pytest.approx(0.3)
    assert long_query_share(0.5, 16) == pytest.approx(0.4)

    long_statement = (
        "the on-call engineer pages the incident commander whenever a severity one outage hits customers, "
        "writes the timeline, updates the status page and schedules the blameless postmortem review"
    )
    assert len(Analyzer().tokens(long_statement)) >= 20
    queries = ("page the on-call engineer", long_statement, long_statement + "?")
    seen = _fused_weights(settings, corpus, monkeypatch, 0.5, queries)
    assert seen == [0.5, pytest.approx(0.3), pytest.approx(0.3)]


def test_dense_feedback_is_for_short_statements_and_moves_the_query_towards_its_hits() -> None:
    import numpy as np

    from docshelf.search.feedback import applies, is_question, moved

    assert applies("vitamin D", 2, 1.0) and applies("statin side effects", 3, 0.67)
    assert not applies("what is vitamin D?", 3, 1.0)  # a question keeps its vector
    assert is_question("How do I page someone? ") and is_question("什么是栉水母？")
    assert is_question("¿Dónde está el manual") and is_question("ما هذا؟")
    assert not is_question("how to page someone") and not is_question("What? No. It is fine.")
    assert not applies("a claim with many words about one thing", 7, 1.0) and not applies("", 0, 0.0)
    assert not applies("vacation days request", 3, 1 / 3)  # the first hits rest on one shared word
    got = moved(np.array([1.0, 0.0], dtype=np.float32), [np.array([0.0, 1.0], dtype=np.float32)] * 2)
    assert got is not None and np.allclose(got, [2**-0.5, 2**-0.5])
    assert moved(np.array([1.0, 0.0], dtype=np.float32), []) is None
    # a vector of another width (a re-embed under way) is no feedback
    assert moved(np.array([1.0, 0.0], dtype=np.float32), [np.ones(3, dtype=np.float32)]) is None


@pytest.mark.usefixtures("backend")
def test_a_short_statement_searches_the_dense_side_again_with_its_moved_vector(
    settings: Settings, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nfcorpus's short queries gain from it (test 0.3409 -> 0.3556): a second dense search, with
    the query's vector moved towards the stored vectors of its first three fused hits."""
    import numpy as np

    import docshelf.search.searcher as searcher_module
    from docshelf.embed import HashEmbedder

    moves: list[tuple[Any, list[Any], Any]] = []
    real_moved = searcher_module.moved

    def spy(q: Any, hits: list[Any]) -> Any:
        out = real_moved(q, hits)
        moves.append((q, hits, out))
        return out

    monkeypatch.setattr(searcher_module, "moved", spy)

    def dense_searches(query: str, feedback: bool) -> list[Any]:
        settings.search.dense_feedback = feedback
        with Stages(settings, embedder=HashEmbedder()) as rt:
            rt.indexer().sync("test", [corpus])
            asked: list[Any] = []
            real = rt.store.vector_search
            monkeypatch.setattr(rt.store, "vector_search", lambda v, k, f: asked.append(v) or real(v, k, f))
            before = len(moves)
            assert rt.searcher().search(query, mode="hybrid", k=3).hits
            if len(moves) > before and rt.embedder is not None:
                q, hits, _ = moves[-1]
                assert np.allclose(q, rt.embedder.embed_query(query)) and len(hits) == 3
            return asked

    statement = "page the on-call engineer"
    without = dense_searches(statement, feedback=False)
    assert not moves
    with_it = dense_searches(statement, feedback=True)
    assert len(with_it) == len(without) + 1 and len(moves) == 1
    target = moves[0][2]
    assert np.array_equal(with_it[-1], target) and abs(float(np.linalg.norm(target)) - 1) < 1e-5
    assert not np.allclose(target, moves[0][0])
    question = "who do we page for a sev-1?"
    assert len(dense_searches(question, feedback=True)) == len(dense_searches(question, feedback=False))
    assert len(moves) == 1  # a question keeps its own vector


def test_a_repeated_query_is_embedded_once(settings: Settings, corpus: Path) -> None:
    """An agent pages through one query's hits (each page searches again) and narrows it with
    filters: the query's vector is kept, so the model runs once; another query embeds anew."""
    from docshelf.embed import HashEmbedder

    class Counting(HashEmbedder):
        embedded: ClassVar[list[str]] = []

        def embed_query(self, text: str) -> Any:
            self.embedded.append(text)
            return super().embed_query(text)

    with Stages(settings, embedder=Counting()) as rt:
        rt.indexer().sync("test", [corpus])
        searcher = rt.searcher()
        first = searcher.search("roll back a deploy", mode="hybrid", k=3)
        again = searcher.search("roll back a deploy", mode="semantic", k=5)
        narrowed = searcher.search("roll back a deploy", k=3, flt=SearchFilter(path_glob="runbooks/*"))
        other = searcher.search("vacation days", mode="semantic", k=3)
        assert Counting.embedded == ["roll back a deploy", "vacation days"]
        fresh = rt.searcher().search("roll back a deploy", mode="semantic", k=5)  # a new searcher embeds
        assert Counting.embedded[-1] == "roll back a deploy"
    assert first.hits and [(h.chunk_id, h.score) for h in again.hits] == [
        (h.chunk_id, h.score) for h in fresh.hits
    ]
    assert narrowed.hits and all(h.path.startswith("runbooks/") for h in narrowed.hits)
    assert other.hits and other.hits[0].chunk_id != first.hits[0].chunk_id
