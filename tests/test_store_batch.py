"""Store.replace_documents: a batch of document swaps (one transaction in the embedded store)."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

import pytest

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.errors import DocshelfError
from docshelf.store.base import Replacement
from docshelf.testing import Stages

pytestmark = pytest.mark.usefixtures("backend")


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    for name in ("alpha", "beta", "gamma"):
        (root / f"{name}.md").write_text(f"# {name}\n\nThe {name} note says {name} twice: {name}.\n")
    return root


def _new_version(rt: Stages, path: str, word: str) -> Replacement:
    """The indexed document at ``path`` with its chunks' text and ids changed (a new version)."""
    doc = rt.store.get_document("test", path)
    assert doc is not None
    chunks = [
        dataclasses.replace(c, id=f"{c.id}-{word}", text=f"{word} {c.text}", embed_key=f"{c.embed_key}{word}")
        for c in rt.store.document_chunks(doc.id)
    ]
    vectors = rt.embedder.embed_documents([c.text for c in chunks])
    return Replacement(dataclasses.replace(doc, content_hash=word), chunks, dict(
        zip((c.embed_key for c in chunks), vectors, strict=True)))  # fmt: skip


def _texts(rt: Stages, path: str) -> list[str]:
    doc = rt.store.get_document("test", path)
    assert doc is not None
    return [c.text for c in rt.store.document_chunks(doc.id)]


def test_a_batch_swaps_every_document_and_search_finds_the_new_text(stages: Stages, tmp_path: Path) -> None:
    stages.indexer().sync("test", [_corpus(tmp_path)])
    batch = [_new_version(stages, p, "zebrafish") for p in ("alpha.md", "beta.md")]
    stages.store.replace_documents(batch)
    stages.store.commit()
    assert all(t.startswith("zebrafish ") for p in ("alpha.md", "beta.md") for t in _texts(stages, p))
    assert not any(t.startswith("zebrafish") for t in _texts(stages, "gamma.md"))
    hits = stages.searcher().search("zebrafish", k=10, mode="keyword").hits
    assert {h.path for h in hits} == {"alpha.md", "beta.md"}


def test_a_failed_batch_keeps_each_document_whole_and_loses_none(stages: Stages, tmp_path: Path) -> None:
    stages.indexer().sync("test", [_corpus(tmp_path)])
    before = {p: _texts(stages, p) for p in ("alpha.md", "beta.md")}
    good = _new_version(stages, "alpha.md", "zebrafish")
    bad = _new_version(stages, "beta.md", "zebrafish")
    # beta's new chunk reuses alpha's new chunk id: the store refuses the row
    bad = dataclasses.replace(bad, chunks=[dataclasses.replace(c, id=good.chunks[0].id) for c in bad.chunks])
    with pytest.raises(DocshelfError):
        stages.store.replace_documents([good, bad])
    stages.store.commit()
    for path, old in before.items():
        now = _texts(stages, path)
        new = [f"zebrafish {t}" for t in old]
        assert now in (old, new), f"{path} is neither its old nor its new version: {now}"
    assert _texts(stages, "beta.md") == before["beta.md"]  # the refused one is never lost
    assert len(stages.store.document_states("test")) == 3


def test_the_same_document_twice_in_a_batch_keeps_its_last_version(stages: Stages, tmp_path: Path) -> None:
    stages.indexer().sync("test", [_corpus(tmp_path)])
    first, last = _new_version(stages, "alpha.md", "first"), _new_version(stages, "alpha.md", "last")
    stages.store.replace_documents([first, last])
    stages.store.commit()
    assert all(t.startswith("last ") for t in _texts(stages, "alpha.md"))


def test_two_writers_holding_a_batch_each_in_opposite_orders_both_finish(
    settings: Settings, tmp_path: Path, backend: str
) -> None:
    """A writer holds its batch's documents until it commits. Two writers given the same documents
    in opposite orders, both stopped at the middle one, then let go: taken in the batch's order
    the two would wait for each other (PostgreSQL aborts one: 'deadlock detected')."""
    if backend != "postgres":
        pytest.skip("the embedded store has one writer at a time (the keyword index's lock)")
    import psycopg

    corpus = tmp_path / "many"
    corpus.mkdir()
    for i in range(9):
        (corpus / f"n{i}.md").write_text(f"# Note {i}\n\nThe note number {i} about topic {i % 3}.\n")
    runtimes = [Stages(settings, embedder=HashEmbedder()) for _ in range(2)]
    errors: list[BaseException] = []

    def write(rt: Stages, batch: list[Replacement]) -> None:
        try:
            rt.store.replace_documents(batch)
        except BaseException as exc:  # surfaced below: a thread's exception is otherwise lost
            errors.append(exc)

    def waiting(conn: psycopg.Connection[Any]) -> int:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        ).fetchone()
        return int(row[0]) if row else 0

    try:
        runtimes[0].indexer().sync("test", [corpus])
        paths = sorted(runtimes[0].store.document_states("test"))
        batch = sorted((_new_version(runtimes[0], p, "next") for p in paths), key=lambda r: r.doc.id)
        middle = batch[len(batch) // 2].doc.id
        with (
            psycopg.connect(str(settings.store.url)) as holder,
            psycopg.connect(str(settings.store.url)) as spy,
        ):
            spy.autocommit = True
            holder.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (middle,))
            threads = [
                threading.Thread(target=write, args=(runtimes[0], batch)),
                threading.Thread(target=write, args=(runtimes[1], batch[::-1])),
            ]
            for t in threads:
                t.start()
            for _ in range(1000):  # until both writers wait on a lock (each has taken what it could)
                if waiting(spy) == 2:
                    break
                threading.Event().wait(0.01)
            assert waiting(spy) == 2
            holder.commit()  # the middle document is free: the writers go on
            for t in threads:
                t.join(60)
        assert not errors
        for rt in runtimes:
            rt.store.commit()
        for p in paths:
            assert all(t.startswith("next ") for t in _texts(runtimes[0], p))
    finally:
        for rt in runtimes:
            rt.close()


def test_terms_made_by_the_store_s_analyzer_are_indexed_as_made_and_others_are_not(
    stages: Stages, tmp_path: Path
) -> None:
    """The parse workers make each chunk's keyword terms: the store indexes those instead of
    analysing the text again, but only when its own analyzer (by fingerprint) made them."""
    stages.indexer().sync("test", [_corpus(tmp_path)])
    planted = stages.analyzer.terms("okapi")
    ours = _new_version(stages, "alpha.md", "zebrafish")
    theirs = _new_version(stages, "beta.md", "zebrafish")
    stages.store.replace_documents([
        dataclasses.replace(ours, terms=[planted] * len(ours.chunks), analyzer=stages.analyzer.fingerprint),
        dataclasses.replace(theirs, terms=[planted] * len(theirs.chunks), analyzer="a0-another-analyzer"),
    ])  # fmt: skip
    stages.store.commit()
    search = stages.searcher().search
    assert planted and [h.path for h in search("okapi", k=10, mode="keyword").hits] == ["alpha.md"]
    assert [h.path for h in search("zebrafish", k=10, mode="keyword").hits] == ["beta.md"]
