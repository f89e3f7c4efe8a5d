"""The second phase of a sync on the embedded store: giving chunks their vectors writes the vectors,
not the chunks again, and leaves the keyword index (which has not changed) uncommitted."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from docshelf.store.embedded import SQLiteStore
from docshelf.testing import Stages


def _notes(tmp_path: Path, files: int = 6) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for n in range(files):
        body = "\n\n".join(f"Paragraph {p} of note {n}: quokka{n} habitats and rainfall." for p in range(8))
        (corpus / f"note{n}.md").write_text(f"# Note {n}\n\n{body}\n", "utf-8")
    return corpus


def _store(stages: Stages) -> SQLiteStore:
    store = stages.store
    assert isinstance(store, SQLiteStore)
    return store


def _rows(store: SQLiteStore) -> dict[str, int]:
    return dict(store._db.execute("SELECT id, seq FROM chunks").fetchall())


def test_chunks_keep_their_rows_when_given_their_vectors(stages: Stages, tmp_path: Path) -> None:
    stages.indexer().sync("test", [_notes(tmp_path)], keyword_only=True)
    store = _store(stages)
    before = _rows(store)
    assert store.missing_vectors() == len(before) > 6

    run = stages.indexer().embed_pending()

    assert run.filled == len(before) and store.missing_vectors() == 0
    assert _rows(store) == before  # not moved to new seqs (each chunk and its trigrams written again)
    db = store._db  # grep's trigrams still point at the chunks' rows
    grams = {r[0] for r in db.execute("SELECT rowid FROM chunk_grams WHERE text LIKE '%quokka3%'")}
    assert grams and grams == {r[0] for r in db.execute("SELECT seq FROM chunks WHERE text LIKE '%quokka3%'")}
    hits = stages.searcher().search("quokka3 habitats", mode="semantic").hits
    assert hits and hits[0].path == "note3.md"
    hybrid = stages.searcher().search("quokka3 habitats", mode="hybrid")
    assert hybrid.note is None and "semantic" in hybrid.hits[0].ranks


def test_vectors_alone_leave_the_keyword_index_uncommitted(stages: Stages, tmp_path: Path) -> None:
    stages.indexer().sync("test", [_notes(tmp_path)], keyword_only=True)
    store = _store(stages)
    keyword_meta = (store.keyword.path / "meta.json").read_bytes()

    stages.indexer().embed_pending()

    assert store.missing_vectors() == 0
    assert (store.keyword.path / "meta.json").read_bytes() == keyword_meta  # no tantivy commit
    assert not store.keyword.writing  # its writer (and lock) never taken
    assert not store.needs_keyword_rebuild()
    stats = store.stats()
    assert stats.keyword_generation == stats.generation  # `status`: the keyword index is in step
    stages.close()
    again = Stages(stages.settings, embedder=stages.embedder)
    try:  # reopened: nothing to rebuild, the same answers
        assert not _store(again).needs_keyword_rebuild()
        assert again.searcher().search("quokka3", mode="keyword").hits[0].path == "note3.md"
        assert again.searcher().search("quokka3 habitats", mode="hybrid").note is None
    finally:
        again.close()


def test_vectors_given_after_a_writer_died_before_its_keyword_commit_leave_the_index_stale(
    stages: Stages, tmp_path: Path
) -> None:
    """A keyword index behind the database (its writer killed between the two commits) must still
    read as behind after another process's vectors, so that the next sync rebuilds it: stamping it
    with the newer generation would hide the documents it lacks."""
    corpus = _notes(tmp_path)
    stages.indexer().sync("test", [corpus], keyword_only=True)
    store = _store(stages)
    (corpus / "note9.md").write_text("# Note 9\n\nA wombat burrow.\n", "utf-8")
    indexer = stages.indexer()
    plan_then_die = indexer._sync  # swapped into SQLite, the keyword writer dropped uncommitted
    store.commit = lambda: None  # type: ignore[method-assign]
    plan_then_die("test", [corpus], [], False)
    store.keyword.release()
    del store.commit
    assert store.needs_keyword_rebuild()

    stages.indexer().embed_pending()

    assert store.missing_vectors() == 0
    assert store.needs_keyword_rebuild()
    stats = store.stats()
    assert stats.keyword_generation != stats.generation
    report = stages.indexer().sync("test", [corpus])  # rebuilt from the database
    assert not store.needs_keyword_rebuild() and report.unchanged == 7
    assert stages.searcher().search("wombat", mode="keyword").hits[0].path == "note9.md"


def test_the_second_phase_publishes_the_dense_side_every_few_thousand_chunks_not_every_batch(
    stages: Stages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each batch is searchable once written; a store commit (which weighs whether to fold the new
    vectors into the HNSW file, counting the whole store) comes every ``PUBLISH_EVERY`` chunks and
    once at the end, so the file holds every vector when the phase ends."""
    from docshelf.index import vectors as phase_two
    from docshelf.store.embedded.ann import read_meta

    stages.settings.embed.batch_size = 1  # 4 chunks a batch
    stages.indexer().sync("test", [_notes(tmp_path, 30)], keyword_only=True)
    store = _store(stages)
    store.ann_threshold = 8
    store.dense.opts = replace(store.dense.opts, rebuild_rows=10)
    chunks = store.missing_vectors()
    monkeypatch.setattr(phase_two, "PUBLISH_EVERY", 20, raising=False)
    commits: list[int] = []
    commit = store.commit
    monkeypatch.setattr(store, "commit", lambda: (commits.append(store.missing_vectors()), commit())[1])

    run = stages.indexer().embed_pending()

    assert run.filled == chunks > 40
    assert len(commits) == chunks // 20 + (chunks % 20 > 0)  # not one per batch of 4
    assert commits[-1] == 0
    meta = read_meta(store.data_dir)
    assert meta is not None and meta.count == chunks  # the last commit folded every vector in
    hits = stages.searcher().search("quokka5 habitats", mode="semantic").hits
    assert hits and hits[0].path == "note5.md"
