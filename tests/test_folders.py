"""Several folders in one collection: a folder that joins a collection with a folder already keys
its files under its name (docshelf.index.mounts), so two README.md are both indexed, and every
path a user gives or a watcher sees finds the right one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp import Client
from typer.testing import CliRunner

from docshelf.analyze import Analyzer
from docshelf.cli import app
from docshelf.config import Settings
from docshelf.errors import AccessError
from docshelf.index.mounts import mounts, with_new
from docshelf.server import create_server
from docshelf.shelf import Shelf
from docshelf.sources.mirror import MANIFEST
from docshelf.store import SQLiteStore
from docshelf.store.copy import copy_store
from docshelf.testing import Stages
from mcpkit import data


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    notes, work = tmp_path / "notes", tmp_path / "work"
    for folder, word in ((notes, "heron"), (work, "pelican")):
        (folder / "sub").mkdir(parents=True)
        (folder / "README.md").write_text(f"# Readme\n\nThe {word} wades at dawn.\n")
        (folder / "sub" / "x.md").write_text(f"# X\n\nA {word} note.\n")
    return notes, work


def test_the_cli_indexes_both_readmes_and_reads_forgets_each(tmp_path: Path) -> None:
    notes, work = _folders(tmp_path)
    env = {"DOCSHELF_EMBED__MODEL": "hash", "DOCSHELF_STORE__DATA_DIR": str(tmp_path / "data")}
    cli = CliRunner(env=env)

    def run(*args: str) -> tuple[int, str, str]:
        result = cli.invoke(app, list(args))
        return result.exit_code, result.stdout, result.stderr

    code, _, err = run("index", str(notes))
    assert code == 0 and "note:" not in err
    code, _, err = run("index", str(work))
    assert code == 0 and "2 added" in err and "skipped" not in err, err
    said = "".join(err.split())
    assert f"note:{work.resolve()}joinedcollection'default',whichhasanotherfolder" in said, err
    assert "itsfilesarecitedaswork/..." in said
    assert "note:" not in run("index", str(work))[2]  # said once, when it joins
    code, out, _ = run("search", "wades at dawn", "--mode", "keyword", "--json")
    hits = {h["path"]: h for h in json.loads(out)["hits"]}
    assert set(hits) == {"README.md", "work/README.md"}
    assert hits["work/README.md"]["abs_path"] == str(work.resolve() / "README.md")
    assert hits["work/README.md"]["citation"].startswith("work/README.md:")
    for ref in ("work/README.md", str(work / "README.md")):  # as cited, and as an absolute path
        code, out, _ = run("read", ref)
        assert code == 0 and "pelican" in out and "heron" not in out, ref
    code, out, _ = run("grep", "pelican")
    assert code == 0 and "work/README.md:3:" in out and "work/sub/x.md:3:" in out, out
    code, out, _ = run("status", "--json", "--skipped")
    assert code == 0 and json.loads(out)["skipped"] == [], out
    assert json.loads(out)["collections"][0]["cited_under"] == {str(work.resolve()): "work/"}
    code, out, _ = run("status", "--roots")
    squashed = "".join(out.split())  # 80 columns wrap a long temporary path anywhere
    assert f"root{work.resolve()}(itsfilescitedaswork/...)" in squashed, out
    assert f"root{notes.resolve()}root" in squashed, out
    code, _, err = run("forget", str(work))
    assert code == 0 and "removed 2 documents and the folder" in err
    code, out, _ = run("ls", "--json")
    assert sorted(d["path"] for d in json.loads(out)["documents"]) == ["README.md", "sub/x.md"]


@pytest.mark.anyio
@pytest.mark.usefixtures("backend")  # PostgreSQL too (its twin is in the slow tier)
async def test_an_agent_reads_and_cites_the_second_folders_readme(
    settings: Settings, shelf: Shelf, tmp_path: Path
) -> None:
    notes, work = _folders(tmp_path)
    shelf.index([notes])
    shelf.index([work])
    async with Client(create_server(settings, shelf)) as client:
        found = data(await client.call_tool("search", {"query": "wades at dawn", "mode": "keyword"}))
        cited = sorted(h["citation"].split(":")[0] for h in found["hits"])
        assert cited == ["README.md", "work/README.md"]
        read = data(await client.call_tool("read_document", {"document": "work/README.md"}))
        assert "pelican" in read["text"] and "heron" not in read["text"]


@pytest.mark.usefixtures("backend")  # PostgreSQL too (its twin is in the slow tier)
def test_a_watchers_changes_in_a_named_folder_find_their_documents(stages: Stages, tmp_path: Path) -> None:
    notes, work = _folders(tmp_path)
    indexer = stages.indexer()
    indexer.sync("test", [notes, work])
    (work / "README.md").write_text("# Readme\n\nThe pelican left.\n")
    (work / "sub" / "new.md").write_text("# New\n\nA new page.\n")
    (work / "sub" / "x.md").unlink()
    changed = [work / "README.md", work / "sub" / "new.md", work / "sub" / "x.md"]
    sync = indexer.sync("test", changed=changed)
    assert (sync.updated, sync.added, sync.removed) == (
        ["work/README.md"],
        ["work/sub/new.md"],
        ["work/sub/x.md"],
    )
    assert sorted(stages.store.document_states("test")) == [
        "README.md", "sub/x.md", "work/README.md", "work/sub/new.md",
    ]  # fmt: skip
    (work / "sub" / "blob.txt").write_bytes(b"\x00\x01\x02\x03")  # a skip keyed as stored, too
    sync = indexer.sync("test", changed=[work / "sub" / "blob.txt"])
    assert [s.path for s in sync.skipped] == ["work/sub/blob.txt"]
    assert "work/sub/blob.txt" in {s.path for _, s in stages.store.skipped("test")}


@pytest.mark.usefixtures("backend")  # PostgreSQL too (its twin is in the slow tier)
def test_status_finds_a_named_folders_changes_and_its_absence(shelf: Shelf, tmp_path: Path) -> None:
    notes, work = _folders(tmp_path)
    with shelf:
        shelf.index([notes, work], "test")
        assert shelf.status().stale == []
        os.utime(work / "README.md", ns=(1, 1))
        assert [(s["path"], s["reason"]) for s in shelf.status().stale] == [("work/README.md", "modified")]
        (work / "README.md").rename(tmp_path / "elsewhere.md")
        (work / "sub" / "x.md").unlink()
        (work / "sub").rmdir()
        work.rmdir()  # the whole folder gone: one line for it, not one per file
        stale = [(s["path"], s["reason"]) for s in shelf.status().stale]
        assert stale == [(str(work.resolve()), "folder not on this machine")]


@pytest.mark.usefixtures("backend")  # PostgreSQL too (its twin is in the slow tier)
def test_a_read_in_a_named_folder_stays_inside_it(shelf: Shelf, tmp_path: Path) -> None:
    notes, work = _folders(tmp_path)
    secret = tmp_path / "secret.md"  # beside the folder, in its parent: the documents' stored root
    secret.write_text("the key is under the mat\n")
    with shelf:
        shelf.index([notes, work], "test")
        assert "pelican" in shelf.read_range("work/README.md").text
        (work / "sub" / "x.md").unlink()
        (work / "sub" / "x.md").symlink_to(secret)  # re-pointed at the parent's file since
        with pytest.raises(AccessError, match="outside the corpus root"):
            shelf.read_range("work/sub/x.md")
        for ref in ("work/../secret.md", str(tmp_path / "secret.md")):
            with pytest.raises(AccessError):
                shelf.read_range(ref)


@pytest.mark.usefixtures("backend")  # PostgreSQL too (its twin is in the slow tier)
def test_collections_from_before_keep_their_keys(stages: Stages, tmp_path: Path) -> None:
    """A collection whose folders were recorded before folders were keyed by name keeps its
    keys: nothing is re-keyed (re-parsed, re-cited) by an upgrade."""
    notes, work = _folders(tmp_path)
    (work / "README.md").unlink()  # two folders indexed the old way, with no path in common
    stages.store.set_collection_roots("test", [str(notes.resolve()), str(work.resolve())])
    indexer = stages.indexer()
    first = indexer.sync("test")
    assert sorted(first.added) == ["README.md", "sub/x.md"]  # work's sub/x.md met notes' own
    assert sorted(stages.store.document_states("test")) == ["README.md", "sub/x.md"]
    third = tmp_path / "third"
    third.mkdir()
    (third / "README.md").write_text("# Third\n\nA third folder.\n")
    assert indexer.sync("test", [third]).added == ["third/README.md"]  # a folder joining now is named
    indexer.forget("test", str(work))  # and an old folder forgotten and indexed again joins anew
    assert sorted(indexer.sync("test", [work]).added) == ["work/sub/x.md"]


def test_a_mirror_of_fetched_pages_is_never_named(tmp_path: Path) -> None:
    mirror, folder, other = tmp_path / "mirror", tmp_path / "folder", tmp_path / "other"
    for path in (mirror, folder, other):
        path.mkdir()
    (mirror / MANIFEST).write_text("{}")
    # a mirror first: the first plain folder still keys its files by their path inside it
    assert with_new(set(), [mirror], [folder, other]) == {str(other)}
    assert with_new(set(), [folder], [mirror]) == set()
    assert with_new(set(), [folder], [Path("/")]) == set()  # no name to key its files under


def test_a_copy_of_the_index_keeps_the_keys(stages: Stages, tmp_path: Path) -> None:
    notes, work = _folders(tmp_path)
    stages.indexer().sync("test", [notes, work])
    target = SQLiteStore(tmp_path / "copy", Analyzer(["english"]))
    try:
        copy_store(stages.store, target)
        assert sorted(target.document_states("test")) == sorted(stages.store.document_states("test"))
        assert [m.named for m in mounts(target, "test")] == [False, True]
    finally:
        target.close()
