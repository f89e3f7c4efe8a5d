"""Sync against the real SQLite store and the real tantivy index (hash embedder)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from docshelf.embed import HashEmbedder
from docshelf.embed.base import Vectors
from docshelf.errors import ModelMismatchError, SourceError
from docshelf.shelf import Shelf
from docshelf.store import SQLiteStore
from docshelf.store.base import SearchFilter
from docshelf.testing import Stages

# the same tests run against the embedded store and PostgreSQL + pgvector
pytestmark = pytest.mark.usefixtures("backend")


def chunk_rows(rt: Stages) -> list[tuple[str, str]]:
    return [(c.id, c.doc_id) for c in rt.store.iter_chunks()]


def keyword_count(rt: Stages) -> int:
    """Chunks the keyword side knows: tantivy documents, or chunks with PostgreSQL postings."""
    store: Any = rt.store
    if isinstance(store, SQLiteStore):
        store.keyword._index.reload()
        # every chunk plus the generation marker
        return int(store.keyword._index.searcher().num_docs) - 1
    import numpy as np

    packed = [np.frombuffer(r[0], dtype=">i8") for r in store._q("SELECT chunks FROM posting_blocks")]
    tail = {r[0] for r in store._q("SELECT chunk FROM posting_tail")}
    seqs = {int(x) for arr in packed for x in arr} | tail
    return len(seqs & {r[0] for r in store._q("SELECT seq FROM chunks")})  # deleted ones stay packed


def paths(rt: Stages) -> set[str]:
    return set(rt.store.document_states("test"))


def test_first_sync_indexes_supported_files_and_skips_rag_false(stages: Stages, corpus: Path) -> None:
    report = stages.indexer().sync("test", [corpus])
    assert "notes/private-draft.md" in report.excluded
    assert "notes/private-draft.md" not in paths(stages)
    assert {"runbooks/incident-response.md", "notes/数据备份策略.md", "archive/style-guide.rst",
            "notes/glossary.txt"} <= paths(stages)  # fmt: skip
    assert "docshelf.toml" not in {s.path for s in report.skipped}
    assert report.chunks_written == len(chunk_rows(stages)) > 0
    assert keyword_count(stages) == len(chunk_rows(stages))


def test_resync_is_idempotent(stages: Stages, corpus: Path) -> None:
    stages.indexer().sync("test", [corpus])
    before = sorted(chunk_rows(stages))
    again = stages.indexer().sync("test", [corpus])
    assert not again.added and not again.updated and not again.removed
    assert again.unchanged == len(paths(stages))
    after = sorted(chunk_rows(stages))
    assert after == before
    assert len({cid for cid, _ in after}) == len(after)
    assert keyword_count(stages) == len(after)


def test_touch_without_change_keeps_chunks(stages: Stages, corpus: Path) -> None:
    stages.indexer().sync("test", [corpus])
    before = sorted(chunk_rows(stages))
    f = corpus / "notes" / "glossary.txt"
    f.write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    report = stages.indexer().sync("test", [corpus])
    assert not report.updated and sorted(chunk_rows(stages)) == before


def test_edit_move_delete(stages: Stages, corpus: Path) -> None:
    stages.indexer().sync("test", [corpus])
    doc = corpus / "notes" / "glossary.txt"
    doc.write_text(doc.read_text(encoding="utf-8") + "\nToil: manual, repetitive operational work.\n",
                   encoding="utf-8")  # fmt: skip
    report = stages.indexer().sync("test", [corpus])
    assert report.updated == ["notes/glossary.txt"]
    hits = stages.searcher().search("toil repetitive", mode="keyword").hits
    assert hits and hits[0].path == "notes/glossary.txt"

    (corpus / "runbooks" / "incident-response.md").rename(corpus / "notes" / "incidents.md")
    report = stages.indexer().sync("test", [corpus])
    assert report.removed == ["runbooks/incident-response.md"] and report.added == ["notes/incidents.md"]
    doc_ids = {d for _, d in chunk_rows(stages)}
    assert doc_ids == {s.id for s in stages.store.document_states("test").values()}  # no ghosts
    hits = stages.searcher().search("page the on-call engineer", mode="keyword").hits
    assert hits[0].path == "notes/incidents.md"

    (corpus / "notes" / "incidents.md").unlink()
    report = stages.indexer().sync("test", [corpus])
    assert report.removed == ["notes/incidents.md"]
    assert all(h.path != "notes/incidents.md" for h in stages.searcher().search("page on-call").hits)
    assert keyword_count(stages) == len(chunk_rows(stages))


class ExplodingEmbedder(HashEmbedder):
    """Fails on any text containing EXPLODE, like a model crashing mid-file."""

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if any("EXPLODE" in t for t in texts):
            raise RuntimeError("model crashed")
        return super().embed_documents(texts)


def test_embed_failure_leaves_the_new_version_keyword_searchable_until_a_later_sync(  # type: ignore[no-untyped-def]
    settings, corpus: Path
) -> None:
    rt = Stages(settings, embedder=ExplodingEmbedder())
    try:
        rt.indexer().sync("test", [corpus])
        f = corpus / "notes" / "glossary.txt"
        f.write_text("EXPLODE\n\nSLO means something new now.\n", encoding="utf-8")
        (corpus / "notes" / "extra.md").write_text("# Extra\n\nA healthy new file.\n", encoding="utf-8")
        report = rt.indexer().sync("test", [corpus])
        assert list(report.embedding_failed) == ["test/notes/glossary.txt"]
        assert report.updated == ["notes/glossary.txt"] and report.added == ["notes/extra.md"]
        assert not report.skipped  # it is indexed: by keyword now, by meaning once the model takes it
        state = rt.store.document_states("test")["notes/glossary.txt"]
        new = rt.store.document_chunks(state.id)
        assert "EXPLODE" in new[0].text
        assert rt.store.without_vectors([c.id for c in new]) == {new[0].id}
        assert report.vectors_missing == rt.store.missing_vectors() == 1
        hits = rt.searcher().search("something new", mode="keyword").hits
        assert hits and hits[0].path == "notes/glossary.txt"
        extra = rt.store.document_chunks(rt.store.document_states("test")["notes/extra.md"].id)
        assert not rt.store.without_vectors([c.id for c in extra])  # the rest of the batch went on
    finally:
        rt.close()
    with Stages(settings, embedder=HashEmbedder()) as healthy:  # the model works again: the next sync
        report = healthy.indexer().sync("test", [corpus])
        assert report.vectors_missing == 0 and not report.embedding_failed
        assert report.vectors is not None and report.vectors.filled == 1


def test_model_change_is_refused_until_reembed(settings, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    rt = Stages(settings, embedder=HashEmbedder(64))
    rt.indexer().sync("test", [corpus])
    rt.close()
    other = Stages(settings, embedder=HashEmbedder(32))
    try:
        with pytest.raises(ModelMismatchError, match="--reembed"):
            other.indexer().sync("test", [corpus])
        with pytest.raises(ModelMismatchError):
            other.searcher()
        assert other.indexer().reembed() > 0
        other.indexer().sync("test", [corpus])
        hits = other.searcher().search("page the on-call engineer", mode="semantic").hits
        assert hits and len(other.store.cached_vectors([c.embed_key for c in other.store.iter_chunks()])) > 0
        assert all(len(v) == 32 for v in other.store.cached_vectors(
            [c.embed_key for c in other.store.iter_chunks()]).values())  # fmt: skip
    finally:
        other.close()


def test_frontmatter_controls(stages: Stages, corpus: Path) -> None:
    stages.indexer().sync("test", [corpus])
    searcher = stages.searcher()
    hits = searcher.search("deploy scp tarball restarting by hand", mode="keyword").hits
    assert all(h.path != "runbooks/deploy-old.md" for h in hits)
    flt = SearchFilter(include_superseded=True)
    hits = searcher.search("deploy scp tarball restarting by hand", mode="keyword", flt=flt).hits
    assert hits[0].path == "runbooks/deploy-old.md"
    hits = searcher.search("deploy", flt=SearchFilter(tags=("hr",))).hits
    assert hits and all("hr" in h.tags for h in hits)
    state = stages.store.document_states("test")["runbooks/deploy.md"]
    chunks = stages.store.document_chunks(state.id)
    assert [c.heading_path[-1] for c in chunks] == [
        "Deploy guide", "Before you deploy", "Rolling out", "Rolling back"]  # fmt: skip
    assert not searcher.search("salary negotiation", mode="keyword").hits


def test_offsets_and_lines_round_trip(stages: Stages, corpus: Path) -> None:
    stages.indexer().sync("test", [corpus])
    for doc in stages.store.iter_documents("test"):
        text = (Path(doc.root) / doc.path).read_text(encoding="utf-8")
        lines = text.splitlines()
        for chunk in stages.store.document_chunks(doc.id):
            assert text[chunk.char_start : chunk.char_end] == chunk.text
            span_lines = "\n".join(lines[chunk.line_start - 1 : chunk.line_end])
            assert chunk.text.splitlines()[0] in span_lines
            assert chunk.text.splitlines()[-1] in lines[chunk.line_end - 1]


def test_bad_files_are_skipped_and_old_versions_kept(stages: Stages, corpus: Path) -> None:
    (corpus / "notes" / "noise.txt").write_bytes(bytes(range(1, 256)) * 20)
    (corpus / "notes" / "blob.dat").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")  # .png is OCR'd now
    (corpus / "notes" / "blob.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    report = stages.indexer().sync("test", [corpus])
    reasons = {s.path: s.reason for s in report.skipped}
    assert "no text encoding fits" in reasons["notes/noise.txt"]
    assert "no parser" in reasons["notes/blob.dat"]  # decided by name, never opened
    assert "binary" in reasons["notes/blob.txt"]
    doc = corpus / "runbooks" / "incident-response.md"
    doc.write_text("---\ntitle: [unclosed\n---\n# Broken\n", encoding="utf-8")
    report = stages.indexer().sync("test", [corpus])
    assert "runbooks/incident-response.md" in {s.path for s in report.skipped}
    hits = stages.searcher().search("page the on-call engineer", mode="keyword").hits
    assert hits[0].path == "runbooks/incident-response.md"  # old version still searchable
    # an indexed text file overwritten with binary bytes was dropped: "1 removed"
    glossary = corpus / "notes" / "glossary.txt"
    before = stages.store.document_states("test")["notes/glossary.txt"]
    glossary.write_bytes(b"x\x00\x01y")
    report = stages.indexer().sync("test", [corpus])
    assert "notes/glossary.txt" not in report.removed
    assert "binary" in {s.path: s.reason for s in report.skipped}["notes/glossary.txt"]
    assert stages.store.document_states("test")["notes/glossary.txt"].content_hash == before.content_hash


def test_a_folder_added_to_a_collection_keys_its_files_under_its_name(stages: Stages, tmp_path: Path) -> None:
    """`docshelf index ~/notes` then `docshelf index ~/work` put both in one collection keyed by
    the path inside each folder: the second README.md was skipped as "same path already indexed".
    A folder that joins a collection with a folder already keys its files under its name."""
    first, second = tmp_path / "notes", tmp_path / "work"
    for root, word in ((first, "heron"), (second, "pelican")):
        (root / "sub").mkdir(parents=True)
        (root / "README.md").write_text(f"# Readme\n\nThe {word} stands in the shallows.\n")
        (root / "sub" / f"{word}.md").write_text(f"only in {word}\n")
    indexer = stages.indexer()
    assert sorted(indexer.sync("test", [first]).added) == ["README.md", "sub/heron.md"]
    second_sync = indexer.sync("test", [second])
    assert sorted(second_sync.added) == ["work/README.md", "work/sub/pelican.md"] and not second_sync.skipped
    states = stages.store.document_states("test")
    assert states["work/README.md"].root == str(second.parent.resolve())  # root / path: the file
    again = indexer.sync("test")
    assert not again.added and not again.updated and not again.removed and again.unchanged == 4
    (second / "README.md").write_text("# Readme\n\nThe pelican left.\n")
    assert indexer.sync("test").updated == ["work/README.md"]
    # the keys stay when the first folder goes: citations do not change under anyone's feet
    indexer.forget("test", str(first))
    assert sorted(stages.store.document_states("test")) == ["work/README.md", "work/sub/pelican.md"]
    assert not indexer.sync("test").added
    assert indexer.forget("test", str(second / "sub" / "pelican.md")) == ["work/sub/pelican.md"]
    indexer.forget("test", str(second))
    assert stages.store.document_states("test") == {}


def test_a_named_folder_that_meets_a_path_of_the_first_keeps_the_first_whatever_is_synced(
    stages: Stages, tmp_path: Path
) -> None:
    """A sync of the second root alone took the path over from the first, and the next full sync
    gave it back: each flip re-embedded, and (with a web page as the second root) a fetched page
    replaced the user's own file of that name. With folders keyed under their name, a path still
    meets another when the first folder has a subfolder of the second's name."""
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "second").mkdir(parents=True)
    second.mkdir()
    (first / "second" / "x.md").write_text("# X\n\nThe heron stands in the shallows.\n")
    (second / "x.md").write_text("# X\n\nThe pelican stands in the shallows.\n")
    (second / "pelican.md").write_text("only in pelican\n")
    indexer = stages.indexer()
    indexer.sync("test", [first])
    targeted = indexer.sync("test", [second], scope=[second])
    assert [s.path for s in targeted.skipped] == ["second/x.md"]
    assert str(first.resolve()) in targeted.skipped[0].reason and "second/x.md" not in targeted.updated
    # and how to keep both: the second folder in a collection of its own
    assert f"`docshelf forget {second.resolve()}`, then `docshelf index {second.resolve()} -c second`" in (
        targeted.skipped[0].reason
    )
    assert "second/pelican.md" in targeted.added
    state = stages.store.document_states("test")["second/x.md"]
    assert state.root == str(first.resolve())
    full = indexer.sync("test")
    assert not full.updated and not full.added and [s.path for s in full.skipped] == ["second/x.md"]
    (first / "second" / "x.md").unlink()  # the first root lets go of it: now the second one's file is indexed
    moved = indexer.sync("test")
    assert moved.updated == ["second/x.md"] or moved.added == ["second/x.md"]
    assert stages.store.document_states("test")["second/x.md"].root == str(second.parent.resolve())


def test_forgetting_a_root_drops_its_skip_records(stages: Stages, tmp_path: Path) -> None:
    """`forget ROOT` removed the root's documents but left its skip records: `status` went on
    listing a file of the forgotten folder as skipped (with the remedy already taken), and for
    a collection left without roots no sync would ever clear them."""
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first / "second", second):  # the second folder's x.md meets the first's
        folder.mkdir(parents=True)
        (folder / "x.md").write_text(f"# X\n\nA page of {folder}.\n")
    (first / "noise.txt").write_bytes(b"\x00\x01\x02\x03")  # the first root's own skip
    (second / "blob.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    indexer = stages.indexer()
    indexer.sync("test", [first, second])

    def skipped() -> set[str]:
        return {s.path for _, s in stages.store.skipped("test")}

    assert skipped() == {"second/x.md", "noise.txt", "second/blob.txt"}  # x.md: the second root's
    indexer.forget("test", str(second))
    assert skipped() == {"noise.txt"}
    assert stages.store.document_states("test")["second/x.md"].root == str(first.resolve())
    indexer.forget("test", str(first))
    assert skipped() == set() and stages.store.collection_roots("test") == []


def test_a_scoped_sync_reports_only_what_lies_in_its_scope(stages: Stages, corpus: Path) -> None:
    """`ingest corpus/sub` listed the skipped files of the whole root."""
    indexer = stages.indexer()
    indexer.sync("test", [corpus])
    (corpus / "notes" / "blob.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (corpus / "runbooks" / "noise.txt").write_bytes(b"\x00\x01\x02\x03")
    report = indexer.sync("test", scope=[corpus / "runbooks"])
    assert [s.path for s in report.skipped] == ["runbooks/noise.txt"]
    full = indexer.sync("test")
    assert {s.path for s in full.skipped} >= {"notes/blob.txt", "runbooks/noise.txt"}


def test_missing_root_is_an_error(stages: Stages, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        stages.indexer().sync("test", [tmp_path / "nope"])
    assert stages.store.stats().documents == 0


def test_no_keyword_hits_from_a_keyword_index_behind_says_so(settings, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    """After a sync killed between its two commits the keyword index lags the database, and a
    search that found nothing said only "no passage matched"."""
    import sqlite3

    if settings.store.url:
        pytest.skip("PostgreSQL postings are written in the same transaction as their rows")
    with Stages(settings, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [corpus])
        assert "behind" not in (rt.searcher().search("zanzibar", mode="keyword").note or "")
    with sqlite3.connect(settings.store.data_dir / "docshelf.db") as db:  # as a killed sync leaves it
        # (the generation and that of the last write the keyword index follows)
        sql = "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key IN ('generation', 'keyword_at')"
        db.execute(sql)
    settings.store.read_only = True  # what `docshelf search` opens: it cannot rebuild anything
    with Stages(settings, embedder=HashEmbedder()) as rt:
        note = rt.searcher().search("zanzibar", mode="keyword").note or ""
    assert "keyword index is behind the database" in note and "docshelf index" in note


def test_keyword_index_rebuilt_from_sqlite(settings, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    rt = Stages(settings, embedder=HashEmbedder())
    rt.indexer().sync("test", [corpus])
    store: Any = rt.store
    if isinstance(store, SQLiteStore):
        rt.close()
        shutil.rmtree(settings.store.data_dir / "keyword")
    else:  # PostgreSQL postings cannot drift from their rows; an analyzer change is what rebuilds them
        with store._tx() as conn:
            conn.execute("TRUNCATE posting_tail, posting_blocks")
        store.set_meta("analyzer", "an older analyzer")
        rt.close()
    rt = Stages(settings, embedder=HashEmbedder())
    try:
        assert rt.store.needs_keyword_rebuild()
        rt.indexer().sync("test", [corpus])
        assert not rt.store.needs_keyword_rebuild()
        hits = rt.searcher().search("page the on-call engineer", mode="keyword").hits
        assert hits[0].path == "runbooks/incident-response.md"
    finally:
        rt.close()


def test_forget_document_and_root(shelf: Shelf, plain_corpus: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "extra.md").write_text("# Extra\n\nkumquat orchard notes\n", encoding="utf-8")
    shelf.index([plain_corpus, other], "test")

    def indexed() -> set[str]:
        return {d.path for d in shelf.list_documents("test")}

    assert shelf.forget("notes/glossary.txt", "test").removed == ["notes/glossary.txt"]
    assert "notes/glossary.txt" not in indexed()
    gone = shelf.forget(str(other), "test")
    assert gone.removed == ["other/extra.md"] and gone.root == str(other.resolve())
    assert not shelf.search("kumquat orchard", mode="keyword").hits
    report = shelf.index([], "test").sync  # known roots only: the forgotten root stays out
    assert "other/extra.md" not in indexed() and "notes/glossary.txt" in report.added


def test_git_commit_recorded(shelf: Shelf, plain_corpus: Path) -> None:
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.skip("git not installed")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}  # fmt: skip
    corpus = plain_corpus
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run([git, "-C", str(corpus), *cmd], check=True, env=env)
    head = subprocess.run([git, "-C", str(corpus), "rev-parse", "HEAD"], capture_output=True, text=True)
    report = shelf.index([corpus], "test").sync
    assert report.git_commit == head.stdout.strip() and report.git_dirty is False
    build = shelf.status().collections[0].last_build
    assert build is not None and build.git_commit == report.git_commit


def test_get_documents_fetches_many_at_once_and_skips_unknown_ids(stages: Stages, corpus: Path) -> None:
    stages.indexer().sync("test", [corpus])
    docs = list(stages.store.iter_documents())
    wanted = [d.id for d in docs[:3]] + [docs[0].id, "no-such-document"]
    found = stages.store.get_documents(wanted)
    assert set(found) == {d.id for d in docs[:3]}
    assert all(found[d] == stages.store.get_document_by_id(d) for d in found)


def test_a_keyword_rebuild_at_open_says_when_it_starts_and_how_far_it_got(
    settings, corpus: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    """A new analyzer version re-analyses every passage before the index opens (12 min at 1M chunks):
    the wait is announced and reported, not silent."""
    from docshelf.shelf.opening import repair_keywords
    from docshelf.store import base

    monkeypatch.setattr(base, "PROGRESS_EVERY", 2)  # every store reports through base.report_progress
    rt = Stages(settings, embedder=HashEmbedder())
    try:
        rt.indexer().sync("test", [corpus])
        rt.store.set_meta("analyzer", "an older analyzer")
        chunks = rt.store.stats().chunks
        with caplog.at_level("WARNING", logger="docshelf.shelf"):
            repair_keywords(rt.store, every_s=0)
        lines = [r.getMessage() for r in caplog.records if r.name == "docshelf.shelf"]
        assert "rebuilding it from the database" in lines[0]
        assert f"rebuilding the keyword index: 2 of {chunks} passages" in lines[1]
        assert len(lines) == 2 + chunks // 2 and f"rebuilt from the database ({chunks} passages)" in lines[-1]
        assert not rt.store.needs_keyword_rebuild()
        hits = rt.searcher().search("page the on-call engineer", mode="keyword").hits
        assert hits[0].path == "runbooks/incident-response.md"
    finally:
        rt.close()


def test_documents_below_a_folder(stages: Stages, tmp_path: Path) -> None:
    """The watcher asks whether a path gone from disk held documents (a folder moved away)."""
    root = tmp_path / "tree"
    for rel in ("a/b.md", "a/c/d.md", "ab.md", "a0.md", "é/x.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n\ntext of {rel}\n")
    stages.indexer().sync("test", [root])
    store = stages.store
    assert store.documents_below("test", "a") and store.documents_below("test", "a/c")
    assert store.documents_below("test", "é")
    assert not store.documents_below("test", "a/b.md") and not store.documents_below("test", "ab")
    assert not store.documents_below("other", "a") and not store.documents_below("test", "a/c/d")
