"""Approximate nearest neighbours (usearch HNSW) for large stores, kept in step incrementally."""

from __future__ import annotations

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


def ann_available() -> bool:
    try:
        import usearch.index  # noqa: F401
    except ImportError:
        return False
    return True


class AnnIndex:
    """HNSW over chunk vectors keyed by chunk ``seq``; saved next to the database.

    Updated by key difference (add new, remove gone), so a re-index that touches
    a few files costs a few inserts, not a rebuild; that is only right because a seq is
    never reused (AUTOINCREMENT). Readers update their copy in memory; only the writer saves it.
    """

    def __init__(self, path: Path, dim: int, threads: int = 1, expansion_search: int = 256) -> None:
        from usearch.index import Index

        self.path = path
        self.meta_path = path.with_suffix(".json")
        self.dim = dim
        self.threads = threads
        self.generation = -1
        self._index: Any = Index(
            ndim=dim, metric="ip", dtype="f16", connectivity=16, expansion_add=64,
            expansion_search=expansion_search,
        )  # fmt: skip
        self._load()

    def _load(self) -> None:
        if not (self.path.exists() and self.meta_path.exists()):
            return
        try:
            meta = json.loads(self.meta_path.read_text())
            if meta.get("dim") != self.dim or meta.get("format") != _FORMAT:
                return
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
        self.meta_path.write_text(json.dumps({"generation": self.generation, "dim": self.dim, "format": _FORMAT}))

    def search(self, query: Vectors, count: int) -> Keys:
        """Keys of about the ``count`` nearest vectors, best first."""
        matches = self._index.search(query, count, threads=self.threads)
        return np.asarray(matches.keys, dtype=np.int64)

    def __len__(self) -> int:
        return len(self._index)
