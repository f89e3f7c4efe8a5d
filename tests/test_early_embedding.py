"""Embedding during a sync's first phase, on the core it leaves free (index/early.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.embed.base import Vectors
from docshelf.index.early import EarlyEmbedder, one_core
from docshelf.index.vectors import embed_lock
from docshelf.testing import Stages


class Recording(HashEmbedder):
    """HashEmbedder that notes which thread embedded each text, and the workers it was allowed;
    ``delay`` per call, so the first phase finds the early thread at work."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__()
        self.delay = delay
        self.by_thread: dict[str, list[str]] = {}
        self.workers_seen: list[int | None] = []
        self._guard = threading.Lock()

    def embed_documents(self, texts: Sequence[str], workers: int | None = None) -> Vectors:
        time.sleep(self.delay)
        with self._guard:
            self.by_thread.setdefault(threading.current_thread().name, []).extend(texts)
            self.workers_seen.append(workers)
        return super().embed_documents(texts)

    def early(self) -> list[str]:
        return self.by_thread.get("docshelf-early", [])


def _notes(tmp_path: Path, files: int = 40) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for n in range(files):
        body = "\n\n".join(f"Paragraph {p} of note {n}: wombat{n} burrows, rainfall {p}." for p in range(12))
        (corpus / f"note{n:02d}.md").write_text(f"# Note {n}\n\n{body}\n", "utf-8")
    return corpus


def _small_batches(settings: Settings) -> Settings:
    # a batch (embed.batch_size * 4 chunks) swapped in every few files: the first phase has many
    return settings.model_copy(update={"embed": settings.embed.model_copy(update={"batch_size": 4})})


def _vectors(stages: Stages) -> dict[str, bytes]:
    """chunk id -> its vector's bytes."""
    db = stages.store._db  # type: ignore[attr-defined]
    sql = "SELECT c.id, v.vector FROM chunks c JOIN vectors v ON v.key = c.embed_key"
    return dict(db.execute(sql).fetchall())


def test_the_first_phase_embeds_on_one_core_and_the_index_equals_a_two_phase_one(
    settings: Settings, tmp_path: Path
) -> None:
    corpus = _notes(tmp_path)
    slow = Recording(delay=0.02)
    with Stages(_small_batches(settings), embedder=slow) as early:
        report = early.indexer(settings=early.settings).sync("test", [corpus])
        got = _vectors(early)
        assert early.store.missing_vectors() == 0
    assert slow.early(), "nothing was embedded while the files were read"
    assert len(slow.early()) < report.chunks_written  # the rest was the second phase's
    # every text embedded once, by one phase or the other, and counted once
    embedded = [t for texts in slow.by_thread.values() for t in texts]
    assert len(embedded) == len(set(embedded)) == report.chunks_embedded == report.chunks_written
    assert report.vectors is not None and report.vectors.filled == report.chunks_written
    # the early calls asked for one run at a time; the second phase's used the embedder's own
    assert 1 in slow.workers_seen and None in slow.workers_seen

    plain_settings = settings.model_copy(update={"data_dir": tmp_path / "plain"})
    with Stages(plain_settings, embedder=HashEmbedder()) as plain:
        plain.indexer().sync("test", [corpus], keyword_only=True)
        plain.indexer().embed_pending()
        assert got == _vectors(plain)


def test_keyword_only_embeds_nothing_early(stages: Stages, tmp_path: Path) -> None:
    slow = Recording()
    stages._embedder = slow
    report = stages.indexer().sync("test", [_notes(tmp_path, 5)], keyword_only=True)
    assert report.chunks_written > 0 and slow.by_thread == {}
    assert stages.store.missing_vectors() == report.chunks_written


def test_no_early_embedding_while_another_embedder_holds_the_index(
    settings: Settings, tmp_path: Path
) -> None:
    slow = Recording()
    with Stages(_small_batches(settings), embedder=slow) as wired:
        held = threading.Event()
        release = threading.Event()

        def other() -> None:  # another thread's embed.lock reads like another process's
            with embed_lock(wired.store.data_dir) as mine:
                assert mine
                held.set()
                release.wait(30)

        holder = threading.Thread(target=other)
        holder.start()
        try:
            held.wait(10)
            report = wired.indexer(settings=wired.settings).sync("test", [_notes(tmp_path, 10)])
        finally:
            release.set()
            holder.join()
        assert slow.by_thread == {}  # neither phase embedded: the holder's work
        assert report.vectors is not None and report.vectors.busy
        assert wired.store.missing_vectors() == report.chunks_written


def test_early_embedder_embeds_each_text_once_within_its_cap_and_hands_over_on_stop() -> None:
    calls: list[list[str]] = []
    gate = threading.Event()

    def embed(texts: list[str]) -> Vectors:
        gate.wait(10)
        calls.append(texts)
        return np.ones((len(texts), 3), dtype=np.float32)

    early = EarlyEmbedder(embed, group=2, cap=3)
    early.offer({"a": "A", "b": "B", "c": "C", "d": "D"})  # d: beyond the cap
    early.offer({"a": "A"})  # offered before: not again
    gate.set()
    deadline = time.monotonic() + 10
    while early.embedded < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    got = early.stop()
    assert sorted(got) == ["a", "b", "c"] and [t for c in calls for t in c] == ["A", "B", "C"]
    assert early.take() == {}
    early.offer({"e": "E"})  # stopped: nothing more
    assert early.stop() == {} and early.embedded == 3


def test_early_embedder_leaves_texts_it_failed_on_to_the_second_phase() -> None:
    def embed(texts: list[str]) -> Vectors:
        if "bad" in texts:
            raise RuntimeError("model failed")
        return np.ones((len(texts), 3), dtype=np.float32)

    early = EarlyEmbedder(embed, group=1)
    early.offer({"k1": "bad", "k2": "good"})
    deadline = time.monotonic() + 10
    while early.embedded < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert list(early.stop()) == ["k2"]


def test_one_core_asks_for_one_worker_only_where_the_embedder_takes_it() -> None:
    recording = Recording()
    one_core(recording)(["x"])
    assert recording.workers_seen == [1]
    plain = HashEmbedder()
    assert one_core(plain) == plain.embed_documents  # no such parameter: called as it is
