"""The HNSW index after edits: a chunk's vector in it is always the chunk's current vector.

SQLite reuses the highest rowid after a delete, and the ANN index is updated by key difference,
so a key that came back for new text kept the old text's vector. The property test edits a store
at random and compares the ANN answer with an exact scan of the stored vectors;
`python bench/reliability_bench.py` runs it with many more edits.
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as run_with

sys.path.insert(0, str(Path(__file__).parent))

from annkit import AnnRig, edits

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.store.embedded.ann import ann_available
from docshelf.store.embedded.schema import MIGRATIONS
from docshelf.testing import Stages

if not ann_available():  # (never import usearch itself here: onnxruntime must come first)
    pytest.skip("usearch is not installed", allow_module_level=True)


def _words(n: int, salt: str) -> str:
    rng = np.random.default_rng(zlib.crc32(salt.encode()))
    return " ".join(f"w{int(x)}" for x in rng.integers(0, 100_000, size=n))


def test_an_edited_document_is_found_by_its_new_words_with_the_ann_index_on(
    settings: Settings, tmp_path: Path
) -> None:
    settings.search.ann_threshold = 1  # HNSW from the first chunk on
    settings.search.candidates = 10  # fewer candidates than chunks: the ANN answer matters
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(60):
        (corpus / f"f{i:03d}.txt").write_text(_words(12, f"old{i}") + "\n", "utf-8")
    with Stages(settings, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [corpus])
    db = sqlite3.connect(settings.store.data_dir / "docshelf.db")
    last = db.execute(
        "SELECT d.path FROM chunks c JOIN documents d ON d.id = c.doc_id ORDER BY c.seq DESC LIMIT 1"
    ).fetchone()[0]
    db.close()
    new_text = _words(12, "new text")
    (corpus / last).write_text(new_text + "\n", "utf-8")  # the file whose chunk has the highest seq
    with Stages(settings, embedder=HashEmbedder()) as rt:
        assert rt.indexer().sync("test", [corpus]).updated == [last]
        hits = rt.searcher().search(new_text, k=3, mode="semantic").hits
        assert hits and hits[0].path == last and hits[0].score > 0.99
    with Stages(settings, embedder=HashEmbedder()) as rt:  # the saved vectors.usearch, reloaded
        hits = rt.searcher().search(new_text, k=3, mode="semantic").hits
        assert hits and hits[0].path == last and hits[0].score > 0.99


@run_with(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits(max_ops=12))
def test_after_any_edits_ann_results_equal_the_exact_scan(ops: list[tuple[str, int, int]]) -> None:
    with tempfile.TemporaryDirectory(prefix="h17-ann-") as tmp:
        rig = AnnRig(Path(tmp), docs=40)
        try:
            edited = rig.apply(ops)
            assert rig.stale(edited) == []
            rig.reopen()  # the saved index says the same
            assert rig.stale(edited) == []
        finally:
            rig.close()


def test_an_index_from_before_the_fix_is_upgraded(tmp_path: Path) -> None:
    """Schema 1 (rowids reused) with a saved HNSW file: opening migrates, and edits stay exact."""
    rig = AnnRig(tmp_path, docs=40, schema=1)
    try:
        rig.reopen()
        db = sqlite3.connect(tmp_path / "docshelf.db")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        sql = db.execute("SELECT sql FROM sqlite_master WHERE name='chunks'").fetchone()[0]
        db.close()
        assert version == len(MIGRATIONS) and "AUTOINCREMENT" in sql.upper()
        edited = rig.apply([("edit", rig.last_doc(), 7), ("edit", rig.last_doc(), 8)])
        assert rig.stale(edited) == []
    finally:
        rig.close()


def test_the_checker_catches_a_stale_vector(tmp_path: Path) -> None:
    """The check must be able to fail: swap a vector in the HNSW index by hand."""
    rig = AnnRig(tmp_path, docs=40)
    try:
        edited = rig.apply([("edit", 3, 1)])
        rig.corrupt_ann(edited[0])
        assert rig.stale(edited)
    finally:
        rig.close()
