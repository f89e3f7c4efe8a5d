"""Store.replace_documents: a batch of document swaps (one transaction in the embedded store)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from docshelf.errors import DocshelfError
from docshelf.runtime import Runtime
from docshelf.store.base import Replacement

pytestmark = pytest.mark.usefixtures("backend")


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    for name in ("alpha", "beta", "gamma"):
        (root / f"{name}.md").write_text(f"# {name}\n\nThe {name} note says {name} twice: {name}.\n")
    return root


def _new_version(rt: Runtime, path: str, word: str) -> Replacement:
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


def _texts(rt: Runtime, path: str) -> list[str]:
    doc = rt.store.get_document("test", path)
    assert doc is not None
    return [c.text for c in rt.store.document_chunks(doc.id)]


def test_a_batch_swaps_every_document_and_search_finds_the_new_text(runtime: Runtime, tmp_path: Path) -> None:
    runtime.indexer().sync("test", [_corpus(tmp_path)])
    batch = [_new_version(runtime, p, "zebrafish") for p in ("alpha.md", "beta.md")]
    runtime.store.replace_documents(batch)
    runtime.store.commit()
    assert all(t.startswith("zebrafish ") for p in ("alpha.md", "beta.md") for t in _texts(runtime, p))
    assert not any(t.startswith("zebrafish") for t in _texts(runtime, "gamma.md"))
    hits = runtime.searcher().search("zebrafish", k=10, mode="keyword").hits
    assert {h.path for h in hits} == {"alpha.md", "beta.md"}


def test_a_failed_batch_keeps_each_document_whole_and_loses_none(runtime: Runtime, tmp_path: Path) -> None:
    runtime.indexer().sync("test", [_corpus(tmp_path)])
    before = {p: _texts(runtime, p) for p in ("alpha.md", "beta.md")}
    good = _new_version(runtime, "alpha.md", "zebrafish")
    bad = _new_version(runtime, "beta.md", "zebrafish")
    # beta's new chunk reuses alpha's new chunk id: the store refuses the row
    bad = dataclasses.replace(bad, chunks=[dataclasses.replace(c, id=good.chunks[0].id) for c in bad.chunks])
    with pytest.raises(DocshelfError):
        runtime.store.replace_documents([good, bad])
    runtime.store.commit()
    for path, old in before.items():
        now = _texts(runtime, path)
        new = [f"zebrafish {t}" for t in old]
        assert now in (old, new), f"{path} is neither its old nor its new version: {now}"
    assert _texts(runtime, "beta.md") == before["beta.md"]  # the refused one is never lost
    assert len(runtime.store.document_states("test")) == 3


def test_the_same_document_twice_in_a_batch_keeps_its_last_version(runtime: Runtime, tmp_path: Path) -> None:
    runtime.indexer().sync("test", [_corpus(tmp_path)])
    first, last = _new_version(runtime, "alpha.md", "first"), _new_version(runtime, "alpha.md", "last")
    runtime.store.replace_documents([first, last])
    runtime.store.commit()
    assert all(t.startswith("last ") for t in _texts(runtime, "alpha.md"))
