"""An interrupted `index --reembed` keeps every vector, says so in status, and is continued.

The re-embed used to delete every vector (and record the new model) before embedding anything,
so a kill part-way left chunks without vectors for good and the next `index` said "unchanged".
Two SIGKILL trials here; `python bench/reliability_bench.py` runs many more.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from crashkit import CrashRig
from reembedkit import chunks_without_vectors, reembed_trial

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.embed.base import Vectors
from docshelf.testing import Stages

pytestmark = pytest.mark.usefixtures("backend")


class _Interrupted(HashEmbedder):
    """The new model, stopped (Ctrl-C) once it was asked for more than ``texts`` vectors."""

    def __init__(self, dim: int, texts: int) -> None:
        super().__init__(dim)
        self.budget = texts

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.budget -= len(texts)
        if self.budget < 0:
            raise KeyboardInterrupt
        return super().embed_documents(texts)


def _write_corpus(root: Path, files: int = 30) -> None:
    root.mkdir()
    for i in range(files):
        paras = [f"doc{i:02d} part{p} " + " ".join(f"word{(i * 7 + p * 3 + w) % 97}" for w in range(10))
                 for p in range(5)]  # fmt: skip
        (root / f"f{i:02d}.txt").write_text("\n\n".join(paras) + "\n", "utf-8")


def _indexed_then_interrupted(settings: Settings, tmp_path: Path, texts: int) -> tuple[Path, int]:
    """(corpus, chunks) of an index built with hash-64, then re-embedded with hash-32 until
    ``texts`` vectors were made, and stopped."""
    settings.chunk.max_tokens = 16  # a chunk per paragraph: many batches to interrupt between
    settings.embed.batch_size = 2
    corpus = tmp_path / "corpus"
    _write_corpus(corpus)
    with Stages(settings, embedder=HashEmbedder(64)) as rt:
        rt.indexer().sync("test", [corpus])
        chunks = rt.store.stats().chunks
        assert chunks >= 100
    with Stages(settings, embedder=_Interrupted(32, texts=texts)) as rt, pytest.raises(KeyboardInterrupt):
        rt.indexer().reembed()
    return corpus, chunks


def test_an_interrupted_reembed_keeps_old_vectors_and_the_next_index_finishes_it(
    settings: Settings, tmp_path: Path
) -> None:
    corpus, chunks = _indexed_then_interrupted(settings, tmp_path, 40)
    with Stages(settings, embedder=HashEmbedder(64)) as rt:
        # the old model's index is whole and searchable; status says a re-embed is pending
        assert rt.store.model() == ("hash-64", 64)
        assert chunks_without_vectors(rt.store) == 0
        stats = rt.store.stats()
        assert stats.reembed is not None
        assert stats.reembed["model"] == "hash-32" and 0 < stats.reembed["staged"] < chunks
        hits = rt.searcher().search("doc07 part2 word58", k=3, mode="semantic").hits
        assert hits and hits[0].path == "f07.txt"
    with Stages(settings, embedder=HashEmbedder(32)) as rt:
        report = rt.indexer().sync("test", [corpus])  # a plain index continues the re-embed
        assert report.unchanged == 30
        assert rt.store.model() == ("hash-32", 32)
        assert chunks_without_vectors(rt.store) == 0
        assert rt.store.stats().reembed is None
        hits = rt.searcher().search("doc07 part2 word58", k=3, mode="semantic").hits
        assert hits and hits[0].path == "f07.txt"


def test_a_resumed_reembed_embeds_only_what_was_not_done(settings: Settings, tmp_path: Path) -> None:
    _, chunks = _indexed_then_interrupted(settings, tmp_path, 60)
    with Stages(settings, embedder=HashEmbedder(32)) as rt:
        staged = rt.store.stats().reembed
        assert staged is not None
        assert rt.indexer().reembed() == chunks - staged["staged"]
        assert rt.store.stats().reembed is None and chunks_without_vectors(rt.store) == 0


@pytest.mark.slow  # SIGKILL trials
def test_sigkill_during_reembed_loses_no_vector(backend: str, tmp_path: Path, request: Any) -> None:
    if backend == "postgres":
        pytest.skip("the SIGKILL trials run the CLI on the embedded store")
    rig = CrashRig(tmp_path / "rig", docs=24, seed=3)
    rig.prepare()
    rng = random.Random(5)
    results = [reembed_trial(rig, rng) for _ in range(2)]
    assert all(not r["lost"] and not r["problems"] for r in results), results
    assert any(r["killed"] for r in results)


class _Salted(HashEmbedder):
    """Another model of the same dimension: every vector moves, no chunk's seq does."""

    def __init__(self) -> None:
        super().__init__(64)
        self.name = "salted-64"

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return np.roll(super().embed_documents(texts), 7, axis=1)


def test_a_reembed_rebuilds_the_ann_index_of_a_reader_that_stays_open(
    backend: str, settings: Settings, tmp_path: Path
) -> None:
    if backend == "postgres":
        pytest.skip("the HNSW file is the embedded store's")
    settings.search.ann_threshold = 1
    settings.chunk.max_tokens = 16
    corpus = tmp_path / "corpus"
    _write_corpus(corpus)
    salted = _Salted()
    with Stages(settings, embedder=HashEmbedder(64)) as writer:
        writer.indexer().sync("test", [corpus])
    reader = Stages(settings, embedder=salted)
    try:
        from docshelf.store.base import SearchFilter

        chunk = next(c for c in reader.store.iter_chunks() if c.text.startswith("doc07 part2"))
        reader.store.vector_search(HashEmbedder(64).embed_query(chunk.text), 3, SearchFilter())
        with Stages(settings, embedder=salted) as writer:
            writer.indexer().reembed()
        for store in (reader.store, Stages(settings, embedder=salted).store):  # open, and fresh
            query = salted.embed_documents([chunk.text])[0]
            got = store.vector_search(query, 3, SearchFilter())
            assert got and got[0][0] == chunk.id and got[0][1] > 0.99
            if store is not reader.store:
                store.close()
    finally:
        reader.close()
