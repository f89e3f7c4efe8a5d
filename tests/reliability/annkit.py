"""ANN-after-edits harness: a real SQLite store with HNSW on, random edits, an exact-scan oracle.

Shared by tests/reliability/test_ann_edits.py (a few dozen edit sequences) and
bench/reliability_bench.py (thousands of edits). Vectors are random unit vectors, so the
nearest chunk to a chunk's own vector is that chunk by a wide margin: an ANN answer that
differs from the exact scan means the HNSW index holds a vector the chunk no longer has.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from docshelf.analyze import Analyzer
from docshelf.store.base import DocumentRecord, Replacement, SearchFilter
from docshelf.store.embedded import SQLiteStore
from docshelf.store.embedded import ann as ann_file
from docshelf.store.embedded.ann import AnnOptions
from docshelf.types import Chunk

__all__ = ["AnnRig", "edits"]

DIM = 32
LAST = -1  # an edit of whichever document holds the highest chunk seq (the rowid SQLite reuses)
Op = tuple[str, int, int]  # (edit | delete | add, document, version)


def edits(max_ops: int = 12, docs: int = 40) -> st.SearchStrategy[list[Op]]:
    """Edit sequences, biased towards the document with the highest seq."""
    doc = st.one_of(st.just(LAST), st.integers(0, docs - 1))
    op = st.tuples(st.sampled_from(["edit", "edit", "delete", "add"]), doc, st.integers(1, 1_000_000))
    return st.lists(op, min_size=1, max_size=max_ops)


def _vectors(doc: int, version: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(doc * 1_000_003 + version)
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


class AnnRig:
    """A store of ``docs`` documents (1-3 chunks each) with the ANN index forced on."""

    def __init__(self, work: Path, docs: int = 40, schema: int | None = None) -> None:
        self.work = work
        self.next_doc = docs
        self.store = self._open()
        self.store.set_model("rig", DIM)
        self.store.set_collection_roots("rig", [str(work)])
        for d in range(docs):
            self._put(d, 0)
        self.store.commit()
        if schema == 1:
            self._as_schema_1()

    def _open(self) -> SQLiteStore:
        # every commit folds its rows into the HNSW file (nothing left to the exact scan of new rows),
        # so each edit goes through the file's update path: gone keys removed, new ones added
        return SQLiteStore(self.work, Analyzer(["english"]), ann=AnnOptions(threshold=1, rebuild_rows=0))

    def reopen(self) -> None:
        self.store.close()
        self.store = self._open()

    def close(self) -> None:
        self.store.close()

    # ----- edits -----
    def _put(self, d: int, version: int) -> str:
        doc_id = f"doc{d:05d}"
        n = 1 + (d + version) % 3
        vecs = _vectors(d, version, n)
        chunks = [
            Chunk(id=f"{doc_id}-v{version}-{i}", doc_id=doc_id, ordinal=i, text=f"d{d} v{version} c{i}",
                  char_start=0, char_end=1, line_start=1, line_end=1, heading_path=(), page=None,
                  token_count=3, embed_key=f"k{d}-{version}-{i}")
            for i in range(n)
        ]  # fmt: skip
        doc = DocumentRecord(doc_id, "rig", str(self.work), f"{doc_id}.txt", 1, version, f"h{version}", "t")
        self.store.replace_documents(
            [Replacement(doc, chunks, {c.embed_key: v for c, v in zip(chunks, vecs, strict=True)})]
        )
        return doc_id

    def last_doc(self) -> int:
        row = self._db().execute("SELECT doc_id FROM chunks ORDER BY seq DESC LIMIT 1").fetchone()
        return int(row[0][3:])

    def apply(self, ops: Sequence[Op]) -> list[str]:
        """Run the edits, publish them (which brings the HNSW index up to date and saves it);
        the ids of the documents edited or added that still exist."""
        touched: set[str] = set()
        for kind, doc, version in ops:
            d = self.last_doc() if doc == LAST else doc
            if kind == "add":
                d, self.next_doc = self.next_doc, self.next_doc + 1
            if kind == "delete":
                self.store.delete_documents([f"doc{d:05d}"])
                touched.discard(f"doc{d:05d}")
            else:
                touched.add(self._put(d, version))
        self.store.commit()
        return sorted(touched)

    # ----- checks -----
    def _db(self) -> sqlite3.Connection:
        return sqlite3.connect(self.work / "docshelf.db")

    def _exact(self) -> tuple[list[str], list[str], np.ndarray]:
        db = self._db()
        rows = db.execute(
            "SELECT c.id, c.doc_id, v.vector FROM chunks c JOIN vectors v ON v.key = c.embed_key"
        ).fetchall()
        db.close()
        matrix = np.stack([np.frombuffer(r[2], dtype=np.float32) for r in rows])
        return [r[0] for r in rows], [r[1] for r in rows], matrix

    def stale(self, doc_ids: Sequence[str], k: int = 3) -> list[str]:
        """Chunks of ``doc_ids`` whose ANN top-k differs from the exact scan's (empty: none)."""
        ids, docs, matrix = self._exact()
        problems: list[str] = []
        wanted = set(doc_ids)
        for row, (cid, doc) in enumerate(zip(ids, docs, strict=True)):
            if doc not in wanted:
                continue
            scores = matrix @ matrix[row]
            got = self.store.vector_search(matrix[row], k, SearchFilter())
            if self.store.dense.ann is None:
                problems.append("the ANN index is not on")
            # a stale vector shows as a chunk not found by its own vector, or a score that is not
            # its vector's; the other neighbours are approximate by design (HNSW recall, not staleness)
            exact = {ids[i]: float(scores[i]) for i in range(len(ids))}
            if not got or got[0][0] != cid:
                problems.append(f"{cid}: ANN top hit {got[:1]}, exact {cid}")
            elif any(abs(score - exact[hit]) > 2e-3 for hit, score in got):
                problems.append(f"{cid}: ANN scores {got}, exact {[exact[h] for h, _ in got]}")
        return problems

    def corrupt_ann(self, doc_id: str) -> None:
        """Give the first chunk of ``doc_id`` the opposite vector inside the HNSW index only."""
        seq, blob = (
            self._db()
            .execute(
                "SELECT c.seq, v.vector FROM chunks c JOIN vectors v ON v.key = c.embed_key "
                "WHERE c.doc_id=? ORDER BY c.ordinal LIMIT 1",
                (doc_id,),
            )
            .fetchone()
        )
        self.store.vector_search(_vectors(0, 0, 1)[0], 1, SearchFilter())  # the ANN index is mapped
        ann = self.store.dense.ann
        assert ann is not None and seq <= ann.meta.max_seq
        index = ann_file._new_index(DIM, self.store.dense.opts)
        index.load(str(self.work / ann.meta.file))  # a writable copy of the mapped file
        index.remove(seq)
        index.add(seq, -np.frombuffer(blob, dtype=np.float32))
        self.store.dense.ann = ann_file.Ann(index, ann.meta)

    def _as_schema_1(self) -> None:
        """Turn the store into one written before keys were unique: schema 1, a saved HNSW file
        in the old format (with a stale vector planted in it), chunks.seq a plain rowid."""
        last = self._db().execute("SELECT max(seq) FROM chunks").fetchone()[0]
        generation = self.store.generation()
        self.store.close()
        ann_file.remove_ann(self.work)
        old = ann_file._import_usearch().Index(ndim=DIM, metric="ip", dtype="f16")
        old.add(np.arange(1, last + 1, dtype=np.int64), _vectors(7, 7, last))  # none is a chunk's own
        old.save(str(self.work / "vectors.usearch"))
        (self.work / "vectors.json").write_text(json.dumps({"generation": generation, "dim": DIM}))
        db = self._db()
        cols = db.execute("SELECT sql FROM sqlite_master WHERE name='chunks'").fetchone()[0]
        v1 = re.sub(r'CREATE TABLE "?chunks"?', "CREATE TABLE chunks_v1", cols.replace("AUTOINCREMENT", ""))
        db.executescript(
            f"BEGIN; {v1}; INSERT INTO chunks_v1 SELECT * FROM chunks; DROP TABLE chunks; "
            "ALTER TABLE chunks_v1 RENAME TO chunks; "
            "CREATE INDEX chunks_doc ON chunks(doc_id, ordinal); "
            "CREATE INDEX chunks_embed ON chunks(embed_key); "
            "DROP TABLE reembed; DROP INDEX documents_superseded; PRAGMA user_version = 1; COMMIT;"
        )
        db.close()  # left closed: the caller's reopen() is the first open of the old store
