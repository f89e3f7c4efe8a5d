"""The embedded store's dense side: a saved HNSW file plus exact rows, kept in step incrementally."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from docshelf.analyze import Analyzer
from docshelf.store.base import DocumentRecord, Replacement, SearchFilter
from docshelf.store.embedded import SQLiteStore
from docshelf.store.embedded.ann import AnnOptions, ann_available, read_meta
from docshelf.types import Chunk

if not ann_available():  # (not importorskip: onnxruntime must be imported before usearch)
    pytest.skip("usearch is not installed", allow_module_level=True)

DIM = 16


def _store(path: Path, threshold: int = 20, rebuild: int = 50, ann: AnnOptions | None = None) -> SQLiteStore:
    ann = ann or AnnOptions(threshold, "i8", 64, rebuild, 1)
    store = SQLiteStore(path, Analyzer(["english"]), ann=ann)
    store.set_model("rig", DIM)
    store.set_collection_roots("a", [str(path)])
    store.set_collection_roots("b", [str(path)])
    return store


def _written_with(path: Path, ann: AnnOptions) -> None:
    """30 documents committed by a writer with these HNSW options, then closed."""
    writer = _store(path, ann=ann)
    for n in range(30):
        _put(writer, n)
    writer.commit()
    writer.close()


def _put(
    store: SQLiteStore, n: int, version: int = 0, collection: str = "a", chunks: int = 2,
    lifecycle: str | None = None, vectors: bool = True,
) -> str:  # fmt: skip
    doc_id = f"{collection}{n}"
    vecs = _vectors(n, version, chunks)
    rows = [
        Chunk(id=f"{doc_id}-{version}-{i}", doc_id=doc_id, ordinal=i, text=f"text {n} {i}", char_start=0,
              char_end=1, line_start=1, line_end=1, heading_path=(), page=None, token_count=2,
              embed_key=f"k{doc_id}-{version}-{i}")
        for i in range(chunks)
    ]  # fmt: skip
    doc = DocumentRecord(
        doc_id, collection, "/r", f"{doc_id}.txt", 1, version, f"h{version}", "text", lifecycle=lifecycle
    )
    given = {c.embed_key: v for c, v in zip(rows, vecs, strict=True)} if vectors else {}
    store.replace_documents([Replacement(doc, rows, given)])
    return doc_id


def _vectors(n: int, version: int = 0, chunks: int = 2) -> np.ndarray:
    rng = np.random.default_rng(n * 1000 + version)
    vecs = rng.standard_normal((chunks, DIM)).astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def _exact(path: Path, query: np.ndarray, k: int, collection: str | None = None) -> list[tuple[str, float]]:
    db = sqlite3.connect(path / "docshelf.db")
    rows = db.execute(
        "SELECT c.id, v.vector, d.collection FROM chunks c JOIN vectors v ON v.key = c.embed_key "
        "JOIN documents d ON d.id = c.doc_id"
    ).fetchall()
    db.close()
    rows = [r for r in rows if collection is None or r[2] == collection]
    scores = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows]) @ query
    return [(rows[i][0], float(scores[i])) for i in np.argsort(-scores, kind="stable")[:k]]


def _same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> bool:
    same_ids = [c for c, _ in got] == [c for c, _ in want]
    return same_ids and np.allclose([s for _, s in got], [s for _, s in want])


def _query(seed: int) -> np.ndarray:
    q = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return q / np.linalg.norm(q)


def test_rows_after_the_saved_file_are_scanned_exactly_until_a_rebuild_folds_them_in(tmp_path: Path) -> None:
    store = _store(tmp_path, threshold=20, rebuild=30)
    try:
        for n in range(12):
            _put(store, n)
        store.commit()
        first = read_meta(tmp_path)
        assert first is not None and first.count == 24  # 24 chunks >= 20: the file exists
        for n in range(12, 20):
            _put(store, n)
        store.commit()
        assert read_meta(tmp_path) == first  # 16 new rows < 30: the file is left alone
        dense = store._dense()
        assert dense.ann is not None and len(dense.ann) == 24 and len(dense.exact) == 16
        for seed in range(20):
            q = _query(seed)
            assert _same(store.vector_search(q, 8, SearchFilter()), _exact(tmp_path, q, 8))
        for n in range(20, 28):
            _put(store, n)
        store.commit()
        second = read_meta(tmp_path)
        assert second is not None and second.count == 56 and second.file != first.file
        assert not (tmp_path / first.file).exists()
        dense = store._dense()
        assert dense.ann is not None and len(dense.ann) == 56 and len(dense.exact) == 0
    finally:
        store.close()


def test_chunks_given_their_vectors_later_are_found_by_the_writer_and_by_readers(tmp_path: Path) -> None:
    """A chunk swapped in keyword-first gets its vector after the dense side read its row (the
    writer's own and another process's): it must be ranked then, in the exact rows and once folded
    into the HNSW file, as exactly as a chunk that came with its vector."""
    store = _store(tmp_path, threshold=20, rebuild=30)
    reader = SQLiteStore(tmp_path, Analyzer(["english"]), read_only=True, ann=store.dense.opts)
    try:
        for n in range(12):
            _put(store, n)  # 24 chunks with vectors: the file is built
        for n in range(12, 20):
            _put(store, n, vectors=False)
        store.commit()
        assert store.missing_vectors() == reader.missing_vectors() == 16
        assert store.stats().collections["a"] == {"documents": 20, "chunks": 40, "embedded": 24}
        for s in (store, reader):  # both read every row now, the 16 without vectors too
            hits = s.vector_search(_query(3), 40, SearchFilter())
            assert len(hits) == 24 and all(int(c.split("-")[0][1:]) < 12 for c, _ in hits)
        late = {f"ka{n}-0-{i}": v for n in range(12, 20) for i, v in enumerate(_vectors(n))}
        assert store.add_vectors({**late, "kgone": _vectors(99)[0]}) == 16  # an unknown key is dropped
        store.commit()
        assert store.missing_vectors() == reader.missing_vectors() == 0
        # their seqs lie within the file's, which does not hold them: a reader opened now finds them too
        meta = read_meta(tmp_path)
        assert meta is not None and meta.count == 24 and meta.max_seq >= 40
        fresh = SQLiteStore(tmp_path, Analyzer(["english"]), read_only=True, ann=store.dense.opts)
        try:
            for s in (store, reader, fresh):
                for n in range(12, 20):
                    q = _vectors(n)[1]
                    got = s.vector_search(q, 5, SearchFilter())
                    assert got[0][0] == f"a{n}-0-1" and _same(got, _exact(tmp_path, q, 5))
        finally:
            fresh.close()
        for n in range(20, 28):  # more rows: the writer folds the late ones into a new file
            _put(store, n)
        store.commit()
        meta = read_meta(tmp_path)
        assert meta is not None and meta.count == 56
        for s in (store, reader):
            assert len(s._dense().exact) == 0  # the late ones are in the file now, not also held
            for seed in range(10):
                q = _query(seed)
                assert _same(s.vector_search(q, 8, SearchFilter()), _exact(tmp_path, q, 8))
    finally:
        reader.close()
        store.close()


def test_superseded_chunks_in_the_saved_file_stay_out_unless_asked_for(tmp_path: Path) -> None:
    """With no superseded document the file's hits skip the documents join; once one is folded
    into the file (a later generation) they are filtered again."""
    store = _store(tmp_path, threshold=20, rebuild=30)
    try:
        for n in range(12):
            _put(store, n)
        store.commit()
        q = _query(1)
        assert _same(store.vector_search(q, 8, SearchFilter()), _exact(tmp_path, q, 8))
        assert store._dense().superseded is False
        for n in range(12, 28):  # 32 rows outside the file: the next commit folds them in
            _put(store, n, lifecycle="superseded" if n == 20 else None)
        store.commit()
        dense = store._dense()
        assert dense.ann is not None and len(dense.ann) == 56 and len(dense.exact) == 0
        own = _vectors(20)[0]
        hits = store.vector_search(own, 8, SearchFilter())
        assert len(hits) == 8 and not any(cid.startswith("a20-") for cid, _ in hits)
        shown = store.vector_search(own, 8, SearchFilter(include_superseded=True))
        assert shown[0][0] == "a20-0-0" and shown[0][1] == pytest.approx(1.0, abs=1e-5)
    finally:
        store.close()


def test_a_reader_follows_the_writer_without_reloading_what_it_has(tmp_path: Path) -> None:
    writer = _store(tmp_path)
    for n in range(25):
        _put(writer, n)
    writer.commit()
    reader = SQLiteStore(tmp_path, Analyzer(["english"]), ann=AnnOptions(20, "i8", 64, 50, 1))
    try:
        q = _query(1)
        assert _same(reader.vector_search(q, 5, SearchFilter()), _exact(tmp_path, q, 5))
        statements: list[str] = []
        reader._db.set_trace_callback(statements.append)  # this thread's read connection
        reader.vector_search(q, 5, SearchFilter())
        assert not any("FROM chunks WHERE seq >" in s for s in statements)  # same generation: nothing read
        edited = _put(writer, 3, version=1)  # replaced: 2 rows gone, 2 new
        writer.delete_documents(["a4"])
        writer.commit()  # 4 of 50 keys gone, 2 rows outside: the file stays
        statements.clear()
        got = reader.vector_search(q, 10, SearchFilter())
        assert _same(got, _exact(tmp_path, q, 10))
        assert all(not c.startswith(("a3-0-", "a4-")) for c, _ in got)
        new_rows = [s for s in statements if "JOIN vectors" in s and "c.seq > " in s]
        assert len(new_rows) == 1  # only the rows after the last one it had were read
        assert reader._dense().ann is not None and f"{edited}-1-0" in {c for c, _ in reader.vector_search(
            _vector_of(tmp_path, f"{edited}-1-0"), 1, SearchFilter())}  # fmt: skip
    finally:
        reader.close()
        writer.close()


def test_a_file_written_in_another_scalar_kind_is_read_as_written_then_replaced(tmp_path: Path) -> None:
    """``search.ann_dtype`` changed after the file was written: readers keep answering from it, and
    the writer's next commit writes the file in the kind the settings name."""
    _written_with(tmp_path, AnnOptions(20, "f16", 64, 50, 1))
    meta = read_meta(tmp_path)
    assert meta is not None and meta.dtype == "f16"
    i8 = _store(tmp_path)
    try:
        for seed in range(5):
            q = _query(seed)
            assert _same(i8.vector_search(q, 5, SearchFilter()), _exact(tmp_path, q, 5))
        ann = i8._dense().ann
        assert ann is not None and ann.meta.dtype == "f16"  # mapped, not built anew
        _put(i8, 40)
        i8.commit()
        meta = read_meta(tmp_path)
        assert meta is not None and meta.dtype == "i8" and meta.count == 62
        q = _query(9)
        assert _same(i8.vector_search(q, 5, SearchFilter()), _exact(tmp_path, q, 5))
    finally:
        i8.close()


def test_a_file_with_fewer_links_is_mapped_as_it_is_then_rebuilt_with_the_configured_links(
    tmp_path: Path,
) -> None:
    """A file from before ``search.ann_connectivity`` (16 links, no field in its pointer): readers
    answer from it; the writer's next commit rebuilds it whole, not extends it (loading a file keeps
    its header's links, and 16 was too few for a navigable graph at a million rows)."""
    _written_with(tmp_path, AnnOptions(20, "i8", 64, 50, 1, connectivity=16))
    pointer = tmp_path / "vectors.json"
    raw = json.loads(pointer.read_text(encoding="utf-8"))
    del raw["connectivity"]
    pointer.write_text(json.dumps(raw), encoding="utf-8")
    meta = read_meta(tmp_path)
    assert meta is not None and meta.connectivity == 16
    store = _store(tmp_path)
    try:
        q = _query(3)
        assert _same(store.vector_search(q, 5, SearchFilter()), _exact(tmp_path, q, 5))
        ann = store._dense().ann
        assert ann is not None and ann.meta == meta and ann._index.connectivity == 16
        _put(store, 40)
        store.commit()
        meta = read_meta(tmp_path)
        assert meta is not None and meta.connectivity == 32 and meta.count == 62
        assert _same(store.vector_search(q, 5, SearchFilter()), _exact(tmp_path, q, 5))
        ann = store._dense().ann
        assert ann is not None and ann._index.connectivity == 32
    finally:
        store.close()


def _vector_of(path: Path, chunk_id: str) -> np.ndarray:
    db = sqlite3.connect(path / "docshelf.db")
    blob = db.execute(
        "SELECT v.vector FROM chunks c JOIN vectors v ON v.key = c.embed_key WHERE c.id = ?", (chunk_id,)
    ).fetchone()[0]
    db.close()
    return np.frombuffer(blob, dtype=np.float32)


def test_deleted_chunks_never_come_back_and_many_deletions_rebuild_the_file(tmp_path: Path) -> None:
    store = _store(tmp_path, threshold=20, rebuild=1000)
    try:
        for n in range(30):
            _put(store, n)
        store.commit()
        first = read_meta(tmp_path)
        assert first is not None and first.count == 60
        store.delete_documents(["a0", "a1"])  # 4 of 60 keys gone: kept, dead keys skipped
        store.commit()
        assert read_meta(tmp_path) == first
        for seed in range(10):
            q = _query(seed)
            assert _same(store.vector_search(q, 10, SearchFilter()), _exact(tmp_path, q, 10))
        store.delete_documents([f"a{n}" for n in range(2, 8)])  # 16 of 60: rebuilt without them
        store.commit()
        second = read_meta(tmp_path)
        assert second is not None and second.count == 44
        store.delete_documents([f"a{n}" for n in range(8, 25)])  # below the threshold: file removed
        store.commit()
        assert read_meta(tmp_path) is None and not list(tmp_path.glob("vectors*.usearch"))
        q = _query(3)
        assert _same(store.vector_search(q, 5, SearchFilter()), _exact(tmp_path, q, 5))
    finally:
        store.close()


def test_a_narrow_filter_above_the_threshold_still_finds_its_k_best(tmp_path: Path) -> None:
    store = _store(tmp_path, threshold=20, rebuild=1000)
    try:
        for n in range(60):
            _put(store, n)
        for n in range(3):
            _put(store, n, collection="b")
        store.commit()
        assert read_meta(tmp_path) is not None
        for seed in range(10):
            q = _query(seed)
            got = store.vector_search(q, 5, SearchFilter(collections=("b",)))
            assert _same(got, _exact(tmp_path, q, 5, collection="b"))
    finally:
        store.close()


def test_a_graph_search_that_ends_early_is_answered_from_the_files_exact_ranking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a million rows the HNSW search returned 64 keys for any count (a region it could not
    leave); the store then scanned every row from SQLite in Python (50 s a query)."""
    from docshelf.store.embedded.ann import Ann
    from docshelf.store.embedded.dense import DenseIndex

    store = _store(tmp_path, threshold=20, rebuild=1000)
    try:
        for n in range(80):
            _put(store, n)
        store.commit()
        real = Ann.search

        def stuck(
            self: Ann, query: np.ndarray, count: int, exact: bool = False, threads: int = 1
        ) -> np.ndarray:
            keys = real(self, query, count, exact, threads)
            return keys if exact else keys[:3]

        def no_scan(*args: object) -> None:
            raise AssertionError("the rows were scanned")

        monkeypatch.setattr(Ann, "search", stuck)
        monkeypatch.setattr(DenseIndex, "_scan", no_scan)
        for seed in range(10):
            q = _query(seed)
            assert _same(store.vector_search(q, 10, SearchFilter()), _exact(tmp_path, q, 10))
    finally:
        store.close()


def test_an_index_file_of_the_old_format_is_replaced(tmp_path: Path) -> None:
    store = _store(tmp_path)
    try:
        for n in range(15):
            _put(store, n)
        (tmp_path / "vectors.usearch").write_bytes(b"old f16 index")
        (tmp_path / "vectors.json").write_text(json.dumps({"generation": 1, "dim": DIM}))
        assert read_meta(tmp_path) is None
        store.commit()
        meta = read_meta(tmp_path)
        assert meta is not None and meta.dtype == "i8" and meta.count == 30
        assert not (tmp_path / "vectors.usearch").exists()
        q = _query(5)
        assert _same(store.vector_search(q, 5, SearchFilter()), _exact(tmp_path, q, 5))
    finally:
        store.close()


def test_a_large_store_without_a_usable_file_builds_one_in_memory(tmp_path: Path) -> None:
    writer = _store(tmp_path)
    for n in range(15):
        _put(writer, n)
    writer.commit()
    writer.close()
    meta = read_meta(tmp_path)
    assert meta is not None
    (tmp_path / meta.file).unlink()  # derived data lost
    reader = SQLiteStore(tmp_path, Analyzer(["english"]), ann=AnnOptions(20, "i8", 64, 5, 1))
    try:
        q = _query(2)
        assert _same(reader.vector_search(q, 5, SearchFilter()), _exact(tmp_path, q, 5))
        dense = reader._dense()
        assert dense.ann is not None and len(dense.ann) == 30 and len(dense.exact) == 0
        assert read_meta(tmp_path) is None  # a reader does not save it
    finally:
        reader.close()


def test_a_failed_save_leaves_the_store_searchable_and_the_next_commit_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from docshelf.store.embedded import ann as ann_file

    store = _store(tmp_path, threshold=20, rebuild=1000)
    try:
        for n in range(15):
            _put(store, n)

        def disk_full(*args: object) -> None:
            (tmp_path / "vectors-0.usearch.tmp").write_bytes(b"half")
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(ann_file, "_save", disk_full)
        store.commit()  # no error: the HNSW index is derived data
        assert "not saved" in caplog.text and read_meta(tmp_path) is None
        assert not list(tmp_path.glob("*.tmp"))
        q = _query(4)
        assert _same(store.vector_search(q, 5, SearchFilter()), _exact(tmp_path, q, 5))
        monkeypatch.undo()
        store.commit()
        assert read_meta(tmp_path) is not None
    finally:
        store.close()


def test_searches_read_the_database_memory_mapped_as_configured(tmp_path: Path) -> None:
    from docshelf.config import load_settings
    from docshelf.store import open_store

    for mb in (3, 0):
        settings = load_settings()
        settings.store.data_dir = tmp_path / str(mb)
        settings.store.mmap_mb = mb
        store = open_store(settings, Analyzer(["english"]))
        try:
            assert store._db.execute("PRAGMA mmap_size").fetchone()[0] == mb * 1024 * 1024  # type: ignore[attr-defined]
        finally:
            store.close()
