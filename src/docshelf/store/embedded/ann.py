"""Approximate nearest neighbours (usearch HNSW) for large stores: a derived file next to the database.

Only a writer builds or updates the file (at commit, and only once enough vectors are outside it);
searchers memory-map it, so every process on one index shares the same pages and nothing is
copied into the heap. ``vectors.json`` names the current file: a new one is written under a new
name first and the pointer replaced after, so a reader never pairs a file with another's meta.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from docshelf.embed.base import Vectors
from docshelf.store.embedded.vectors import last_filled, read_filled

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from docshelf.lazy import numpy as np

__all__ = [
    "Ann",
    "AnnMeta",
    "AnnOptions",
    "ann_available",
    "build_ann",
    "read_meta",
    "remove_ann",
    "remove_partial",
]

log = logging.getLogger("docshelf.store")

Keys: TypeAlias = "npt.NDArray[np.int64]"
# 3: int8 (or f16) file named by vectors.json with the highest seq it holds; older files are rebuilt
FORMAT = 3
POINTER = "vectors.json"
_BATCH = 20_000
_ROWS_SQL = (
    "SELECT c.seq, v.vector FROM chunks c JOIN vectors v ON v.key = c.embed_key "
    "WHERE c.seq > ? ORDER BY c.seq LIMIT ?"
)
_FILLED_SQL = (
    "SELECT c.seq, v.vector FROM filled f JOIN chunks c ON c.seq = f.seq "
    "JOIN vectors v ON v.key = c.embed_key WHERE f.n > ? AND f.seq <= ? ORDER BY f.seq"
)


def _import_usearch() -> Any:
    # onnxruntime first: loaded after usearch's extension it crashes the process (segfault on
    # import, usearch 2.26 / onnxruntime 1.32), and the embedder or a reranker may load it later
    with contextlib.suppress(ImportError):
        importlib.import_module("onnxruntime")
    return importlib.import_module("usearch.index")


def ann_available() -> bool:
    try:
        _import_usearch()
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class AnnOptions:
    """How the HNSW index is kept (``search.ann_*`` settings)."""

    threshold: int = 50_000  # from this many vectors on
    dtype: str = "i8"  # scalar kind in the index; hits are re-scored with the stored float32 vectors
    ef_search: int = 256
    rebuild_rows: int = 20_000  # vectors outside the file (scanned exactly) before a writer folds them in
    threads: int = 2  # for building and updating
    # links per node: at 16, a graph of a million int8 e5 vectors stopped being navigable (a stored
    # vector found itself in the top 10 for 21% of searches); at 32 for all of them (docs/benchmarks.md)
    connectivity: int = 32


@dataclass(frozen=True)
class AnnMeta:
    """What ``vectors.json`` says about the current file."""

    file: str
    generation: int
    max_seq: int  # every chunk with a vector and a seq up to this was in the store when it was saved
    count: int
    dim: int
    epoch: str
    dtype: str
    format: int = FORMAT
    connectivity: int = 16  # absent from pointers written before it was a setting: those used 16
    # the highest number in ``filled`` when it was saved: a chunk up to ``max_seq`` numbered above it
    # got its vector later and is not in the file (absent from older pointers: none was then)
    max_filled: int = 0


def read_meta(data_dir: Path) -> AnnMeta | None:
    try:
        raw = json.loads((data_dir / POINTER).read_text(encoding="utf-8"))
        meta = AnnMeta(**raw)
    except (OSError, ValueError, TypeError):
        return None
    return meta if meta.format == FORMAT and (data_dir / meta.file).is_file() else None


def _new_index(dim: int, opts: AnnOptions) -> Any:
    return _import_usearch().Index(
        ndim=dim, metric="ip", dtype=opts.dtype, connectivity=opts.connectivity, expansion_add=64,
        expansion_search=opts.ef_search,
    )  # fmt: skip


class Ann:
    """One HNSW index: a saved file memory-mapped, or one built in this process's memory."""

    def __init__(self, index: Any, meta: AnnMeta) -> None:
        self._index = index
        self.meta = meta

    @classmethod
    def open(cls, data_dir: Path, meta: AnnMeta, opts: AnnOptions) -> Ann | None:
        # the file's own scalar kind and links: the settings may have changed since (the writer rebuilds it)
        index = _new_index(meta.dim, replace(opts, dtype=meta.dtype, connectivity=meta.connectivity))
        try:
            index.view(str(data_dir / meta.file))
        except (OSError, RuntimeError, ValueError) as exc:  # removed meanwhile or damaged: derived
            log.warning("cannot map the HNSW index %s (%s)", data_dir / meta.file, exc)
            return None
        return cls(index, meta)

    def search(self, query: Vectors, count: int, exact: bool = False, threads: int = 1) -> Keys:
        """Keys of about the ``count`` nearest vectors, best first (``exact``: every vector of the
        file compared, in C: ~90 ms at a million int8 rows on two cores)."""
        count = min(count, len(self._index))
        if count <= 0:
            return np.zeros(0, dtype=np.int64)
        matches = self._index.search(query, count, threads=threads, exact=exact)
        return np.asarray(matches.keys, dtype=np.int64)

    def __len__(self) -> int:
        return len(self._index)


def _batches(conn: sqlite3.Connection, after: int, upto: int | None) -> Iterator[tuple[Keys, Vectors]]:
    """(seqs, float32 vectors) of chunks with a vector and a seq above ``after``, in batches."""
    while True:
        rows = conn.execute(_ROWS_SQL, (after, _BATCH)).fetchall()
        if upto is not None:
            rows = [r for r in rows if r[0] <= upto]
        if not rows:
            return
        keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        vecs = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
        yield keys, vecs
        after = int(keys[-1])
        if upto is not None and after >= upto:
            return


def build_ann(
    conn: sqlite3.Connection, data_dir: Path, dim: int, epoch: str, generation: int, opts: AnnOptions,
    base: AnnMeta | None = None, save: bool = True,
) -> Ann:  # fmt: skip
    """An index of every stored vector: ``base``'s file with the gone keys removed and the rows
    after its ``max_seq`` (and those up to it given their vector since) added, or a new one. Saved
    (and the pointer switched) when ``save``. Read in one snapshot (``conn`` is the writer's, or a
    reader's inside ``snapshot``)."""
    max_seq = int(conn.execute("SELECT coalesce(max(seq), 0) FROM chunks").fetchone()[0])
    max_filled = last_filled(conn)
    index = _new_index(dim, opts)
    after = 0
    if base is not None:
        index.load(str(data_dir / base.file))
        live = np.fromiter(
            (r[0] for r in conn.execute("SELECT seq FROM chunks WHERE seq <= ?", (base.max_seq,))),
            dtype=np.int64,
        )
        have = np.asarray(index.keys, dtype=np.int64)
        gone = np.setdiff1d(have, live, assume_unique=True)
        if gone.size:
            index.remove(gone)
        after = base.max_seq
        if max_filled > base.max_filled:  # given their vector since the file was saved: not in it
            rows = read_filled(conn, _FILLED_SQL, (base.max_filled, base.max_seq))
            keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            fresh = ~np.isin(keys, have)
            if fresh.any():
                vecs = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
                index.add(keys[fresh], vecs[fresh], threads=opts.threads)
    for keys, vecs in _batches(conn, after, max_seq):
        index.add(keys, vecs, threads=opts.threads)
    meta = AnnMeta(f"vectors-{generation}-{os.getpid()}.usearch", generation, max_seq, len(index), dim,
                   epoch, opts.dtype, connectivity=opts.connectivity, max_filled=max_filled)  # fmt: skip
    if save:
        _save(index, data_dir, meta)
    return Ann(index, meta)


def _save(index: Any, data_dir: Path, meta: AnnMeta) -> None:
    tmp = data_dir / (meta.file + ".tmp")
    index.save(str(tmp))
    tmp.replace(data_dir / meta.file)
    pointer = data_dir / (POINTER + ".tmp")
    pointer.write_text(json.dumps(asdict(meta)), encoding="utf-8")
    pointer.replace(data_dir / POINTER)
    _remove_others(data_dir, keep=meta.file)


def _remove_others(data_dir: Path, keep: str | None) -> None:
    """Older files (a reader that mapped one keeps its pages: the inode outlives the name)."""
    for path in data_dir.glob("vectors*.usearch*"):
        if path.name != keep:
            path.unlink(missing_ok=True)
    if keep is None:
        (data_dir / POINTER).unlink(missing_ok=True)
    (data_dir / "vectors.json.tmp").unlink(missing_ok=True)


def remove_partial(data_dir: Path) -> None:
    """Leftovers of a save that failed (the pointer still names the last good file)."""
    for path in data_dir.glob("vectors*.tmp"):
        path.unlink(missing_ok=True)


def remove_ann(data_dir: Path) -> None:
    """Drop the saved index (the store shrank below the threshold, or its vectors changed)."""
    _remove_others(data_dir, keep=None)
