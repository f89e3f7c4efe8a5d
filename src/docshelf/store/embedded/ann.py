"""Approximate nearest neighbours (usearch HNSW) for large stores, kept in step incrementally."""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from docshelf.embed.base import Vectors

__all__ = ["AnnIndex", "ann_available"]

log = logging.getLogger("docshelf.store")

Keys = npt.NDArray[np.int64]
# Files of an older format are rebuilt: before format 2 (schema 2) a key could come back for a new
# chunk, and such a file may hold a deleted chunk's vector under a live key.
_FORMAT = 2


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


class AnnIndex:
    """HNSW over chunk vectors keyed by chunk ``seq``; saved next to the database.

    Updated by key difference (add new, remove gone), so a re-index that touches
    a few files costs a few inserts, not a rebuild; that is only right because a seq is
    never reused (AUTOINCREMENT). Readers update their copy in memory; only the writer saves it.
    """

    def __init__(
        self, path: Path, dim: int, epoch: str = "0", threads: int = 1, expansion_search: int = 256
    ) -> None:
        index_cls = _import_usearch().Index
        self.path = path
        self.meta_path = path.with_suffix(".json")
        self.dim = dim
        self.epoch = epoch  # the store's vectors epoch: a file saved under another is rebuilt
        self.threads = threads
        self.generation = -1
        self._index: Any = index_cls(
            ndim=dim, metric="ip", dtype="f16", connectivity=16, expansion_add=64,
            expansion_search=expansion_search,
        )  # fmt: skip
        self._load()

    def _load(self) -> None:
        if not (self.path.exists() and self.meta_path.exists()):
            return
        try:
            meta = json.loads(self.meta_path.read_text())
            if (meta.get("dim"), meta.get("format"), meta.get("epoch")) != (self.dim, _FORMAT, self.epoch):
                return  # another model, an older format or vectors re-embedded since: rebuild
            self._index.load(str(self.path))
            self.generation = int(meta["generation"])
        except (OSError, ValueError, RuntimeError) as exc:  # derived data: rebuild rather than fail
            log.warning("ANN index at %s unreadable (%s); rebuilding it", self.path, exc)
            self._index.reset()
            self.generation = -1

    def sync(self, keys: Keys, matrix: Vectors, rows: npt.NDArray[np.intp], generation: int) -> None:
        """Make the index hold exactly ``keys`` (vectors ``matrix[rows]``)."""
        if generation == self.generation:
            return
        have = np.asarray(self._index.keys, dtype=np.int64) if len(self._index) else np.zeros(0, np.int64)
        gone = np.setdiff1d(have, keys, assume_unique=True)
        new_mask = ~np.isin(keys, have, assume_unique=True)
        if gone.size:
            self._index.remove(gone)
        if new_mask.any():
            self._index.add(keys[new_mask], matrix[rows[new_mask]], threads=self.threads)
        self.generation = generation

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        self._index.save(str(tmp))
        tmp.replace(self.path)
        meta = {"generation": self.generation, "dim": self.dim, "format": _FORMAT, "epoch": self.epoch}
        self.meta_path.write_text(json.dumps(meta))

    def search(self, query: Vectors, count: int) -> Keys:
        """Keys of about the ``count`` nearest vectors, best first."""
        matches = self._index.search(query, count, threads=self.threads)
        return np.asarray(matches.keys, dtype=np.int64)

    def __len__(self) -> int:
        return len(self._index)
