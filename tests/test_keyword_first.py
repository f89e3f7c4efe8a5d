"""While vectors are still being computed: chunks without one are ranked by keyword alone (never
counted against for a dense side that could not rank them), searches say how much semantic search
covers, and `status` shows the share per collection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docshelf.config import Settings
from docshelf.search.confidence import coverage_note
from docshelf.search.fusion import convex_combination, weighted_rrf, zscore_combination
from docshelf.shelf import Shelf
from docshelf.testing import Stages

KEYWORD = [("a", 9.0), ("b", 5.0), ("c", 4.0), ("d", 1.0)]
SEMANTIC = [("b", 0.9), ("c", 0.8), ("d", 0.7), ("e", 0.1)]
WEIGHTS = {"keyword": 0.5, "semantic": 0.5}


def _rank(fused: list[tuple[str, float]]) -> list[str]:
    return [item for item, _ in fused]


def test_an_id_the_dense_side_could_not_rank_is_fused_from_its_keyword_score_alone() -> None:
    lists = {"keyword": KEYWORD, "semantic": SEMANTIC}
    floored = dict(zscore_combination(lists, WEIGHTS))
    fused = dict(zscore_combination(lists, WEIGHTS, unscored={"semantic": {"a"}}))
    kw = dict(zscore_combination({"keyword": KEYWORD}, {"keyword": 1.0}))
    assert fused["a"] == pytest.approx(kw["a"])  # its keyword z-score, not half of it plus a floor
    assert fused["a"] > floored["a"]
    assert {k: v for k, v in fused.items() if k != "a"} == {k: v for k, v in floored.items() if k != "a"}
    assert _rank(zscore_combination(lists, WEIGHTS, unscored={"semantic": {"a"}}))[0] == "a"


def test_every_fusion_makes_an_unranked_id_whole_from_the_lists_that_could_rank_it() -> None:
    lists = {"keyword": KEYWORD, "semantic": SEMANTIC}
    blind = {"semantic": {"a"}}
    for plain, whole in (
        (convex_combination(lists, WEIGHTS), convex_combination(lists, WEIGHTS, blind)),
        (weighted_rrf(lists, WEIGHTS, 60), weighted_rrf(lists, WEIGHTS, 60, blind)),
    ):
        assert dict(whole)["a"] == pytest.approx(dict(plain)["a"] * 2)  # half the weight could rank it
        assert dict(whole)["b"] == dict(plain)["b"]


def test_the_coverage_note_rounds_down() -> None:
    assert coverage_note(66, 100).startswith("semantic search covers 34% of chunks so far")
    assert "covers 99%" in coverage_note(1, 1000)
    assert "covers 0%" in coverage_note(5, 5)


def _notes(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    texts = {
        "zanzibar.md": "# Zanzibar\n\nThe zanzibar ferry leaves the harbour at dawn.\n",
        "ferry.md": "# Ferries\n\nA ferry crosses the strait twice a day.\n",
        "bread.md": "# Bread\n\nKnead the dough and let it rise overnight.\n",
        "tea.md": "# Tea\n\nSteep the leaves for three minutes.\n",
    }
    for name, text in texts.items():
        (corpus / name).write_text(text, "utf-8")
    return corpus


@pytest.mark.usefixtures("backend")
def test_a_hybrid_search_ranks_chunks_without_vectors_by_keyword_and_says_how_far_it_got(
    stages: Stages, tmp_path: Path
) -> None:
    stages.indexer().sync("test", [_notes(tmp_path)], keyword_only=True)
    store = stages.store
    waiting = store.unembedded_chunks(0, 100)
    others = [u for u in waiting if u.path != "zanzibar.md"]
    late = stages.embedder.embed_documents([u.text for u in others])  # any vectors: the model's own
    assert store.add_vectors({u.embed_key: v for u, v in zip(others, late, strict=True)}) == len(others)
    store.commit()
    missing, total = store.missing_vectors(), store.chunk_count()
    assert missing == len(waiting) - len(others) > 0

    result = stages.searcher().search("zanzibar ferry", mode="hybrid")
    top = result.hits[0]
    assert top.path == "zanzibar.md" and "semantic" not in top.ranks  # found, by keyword alone
    assert result.note is not None and f"covers {int((1 - missing / total) * 100)}%" in result.note
    keyword = stages.searcher().search("zanzibar ferry", mode="keyword").hits[0]
    assert top.confidence == keyword.confidence  # judged as a keyword hit, not as a weak hybrid one
    assert stages.searcher().search("zanzibar ferry", mode="semantic").note == result.note

    stages.indexer().embed_pending()
    done = stages.searcher().search("zanzibar ferry", mode="hybrid")
    assert done.note is None and "semantic" in done.hits[0].ranks


@pytest.mark.usefixtures("backend")
def test_status_shows_the_share_of_chunks_with_vectors_per_collection(shelf: Shelf, tmp_path: Path) -> None:
    shelf.index([_notes(tmp_path)], "notes", keyword_only=True)
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("# A\n\nalpha\n", "utf-8")
    shelf.index([other], "other")  # its second phase embeds what the index lacks: both collections
    got = {c.name: (c.chunks, c.embedded, c.vector_share) for c in shelf.status().collections}
    assert got["notes"][1] == got["notes"][0] and got["notes"][2] == 1.0
    shelf.index([tmp_path / "corpus"], "notes", keyword_only=True)  # nothing new: still all there
    (tmp_path / "corpus" / "new.md").write_text("# New\n\nfresh words here\n", "utf-8")
    shelf.index([tmp_path / "corpus"], "notes", keyword_only=True)
    status = shelf.status()
    notes = next(c for c in status.collections if c.name == "notes")
    assert notes.embedded == notes.chunks - 1 and 0 < notes.vector_share < 1
    row = next(c for c in status.as_dict()["collections"] if c["name"] == "notes")
    assert row["embedded"] == notes.embedded and row["vector_share"] == round(notes.vector_share, 4)
    from docshelf.server.tools import status_payload

    mcp = next(c for c in status_payload(shelf)["collections"] if c["name"] == "notes")  # index_status
    assert (mcp["chunks"], mcp["embedded"]) == (notes.chunks, notes.embedded)
    assert json.dumps(status.as_dict())  # what `status --json` sends


def test_an_index_from_before_the_table_of_chunks_to_embed_opens_read_only_and_migrates(
    stages: Stages, tmp_path: Path
) -> None:
    import sqlite3

    from docshelf.analyze import Analyzer
    from docshelf.store.embedded import SQLiteStore

    stages.indexer().sync("test", [_notes(tmp_path)], keyword_only=True)
    data = stages.store.data_dir
    stages.close()
    with sqlite3.connect(data / "docshelf.db") as db:  # as schema 5 left it (every chunk embedded then)
        db.execute("DROP TABLE unembedded")
        db.execute("PRAGMA user_version = 5")
    old = SQLiteStore(data, Analyzer(["english"]), read_only=True)
    try:  # nothing may be written, so nothing migrates: it reads as fully embedded, as it was
        assert old.missing_vectors() == 0 and old.unembedded_chunks(0, 10) == []
        assert old.without_vectors(["x"]) == set() and old.stats().documents == 4
    finally:
        old.close()
    new = SQLiteStore(data, Analyzer(["english"]))
    try:  # a writable open migrates, and finds the chunks that have no vector
        assert new.missing_vectors() == new.chunk_count() == 4
    finally:
        new.close()


def test_a_title_of_megabytes_is_read_back_for_embedding_only_as_far_as_the_header_uses_it() -> None:
    # an Office file's metadata title held the embedding phase's pages at megabytes a row
    # (a 2 MB title: 650 MB peak RSS on the hostile corpus, 220 MB before)
    from docshelf.types import CONTEXT_CHARS, TITLE_READ, contextual_text

    huge = "Quarterly " * 200_000
    for text, heading in (("body text", ()), (huge[:CONTEXT_CHARS] + " body", ()), ("x", (huge[:500],))):
        assert contextual_text(huge, heading, text) == contextual_text(huge[:TITLE_READ], heading, text)
    assert contextual_text("Short", (), "body") == "Short\nbody"
    assert contextual_text("Short", ("Short",), "body") == "Short\nbody"  # said once


@pytest.mark.usefixtures("backend")
def test_the_embedding_phase_reads_a_bounded_title(stages: Stages, tmp_path: Path) -> None:
    from docshelf.types import TITLE_READ

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "long.md").write_text("---\ntitle: " + "T" * 200_000 + "\n---\n\nferry times\n")
    stages.indexer().sync("test", [corpus], keyword_only=True)
    page = stages.store.unembedded_chunks(0, 10)
    assert page and all(len(u.title or "") == TITLE_READ for u in page)
    assert stages.store.get_document("test", "long.md").title == "T" * 200_000  # the index keeps it whole


class _Watched:
    """The hash embedder, saying whether a query was embedded."""

    def __init__(self) -> None:
        from docshelf.embed import HashEmbedder

        self.inner = HashEmbedder()
        self.name, self.dim, self.queries = self.inner.name, self.inner.dim, 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def embed_query(self, text: str) -> object:
        self.queries += 1
        return self.inner.embed_query(text)


@pytest.mark.usefixtures("backend")
def test_a_hybrid_search_with_no_vector_yet_neither_loads_nor_asks_the_model(
    shelf_settings: Settings, tmp_path: Path
) -> None:
    """After `index --keyword-only`, each hybrid `docshelf search` loaded the model (0.8 s of its
    1.35 s over /usr/share/doc) to embed a query that had no vector to be compared with."""
    model = _Watched()
    with Shelf(shelf_settings, embedder=model) as shelf:  # type: ignore[arg-type]
        shelf.index([_notes(tmp_path)], "notes", keyword_only=True)
        result = shelf.search("zanzibar ferry", mode="hybrid")
        assert result.hits[0].path == "zanzibar.md" and model.queries == 0
        assert result.note is not None and coverage_note(8, 8) in result.note  # it says why
        shelf.index([], "notes")  # the vectors follow: the model is asked again
        assert "semantic" in shelf.search("zanzibar ferry", mode="hybrid").hits[0].ranks
        assert model.queries == 1
