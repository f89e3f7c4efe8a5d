"""The second phase of a sync on the embedded store: giving chunks their vectors writes the vectors,
not the chunks again."""

from __future__ import annotations

from pathlib import Path

from docshelf.store.embedded import SQLiteStore
from docshelf.testing import Stages


def _notes(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for n in range(6):
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
