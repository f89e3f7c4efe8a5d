"""A collection's settings live with it: every door (CLI from anywhere, MCP, watch) indexes alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from typer.testing import CliRunner

from docshelf.cli import app
from docshelf.config import load_settings
from docshelf.embed import HashEmbedder
from docshelf.server import create_server
from docshelf.shelf import Shelf
from docshelf.testing import Stages

CORPUS_TOML = """collection = "handbook"

[sources]
exclude = ["drafts/"]

[chunk]
max_tokens = 40
overlap_tokens = 4
"""
# what a user's working directory might hold: other chunking, no exclusion
OTHER_TOML = "[chunk]\nmax_tokens = 300\noverlap_tokens = 0\n"


def _write_corpus(root: Path, version: int) -> None:
    (root / "drafts").mkdir(parents=True, exist_ok=True)
    (root / "docshelf.toml").write_text(CORPUS_TOML, "utf-8")
    body = " ".join(f"Sentence {i} of version {version} about rotating keys and paging." for i in range(40))
    (root / "guide.md").write_text(f"# Guide\n\n{body}\n\n## More\n\n{body}\n", "utf-8")
    (root / "drafts" / "secret.md").write_text(f"# Draft {version}\n\nNot for the index.\n", "utf-8")
    if version >= 2:
        (root / "new.md").write_text(f"# New\n\n{body}\n", "utf-8")


def _snapshot(data_dir: Path) -> dict[str, list[str]]:
    settings = load_settings()
    settings.store.data_dir = data_dir
    with Stages(settings, embedder=HashEmbedder()) as stages:  # the chunk ids: a store's internals
        store = stages.store
        return {d.path: [c.id for c in store.document_chunks(d.id)] for d in store.iter_documents()}


def _reference(tmp_path: Path, corpus: Path, tag: str) -> dict[str, list[str]]:
    """A fresh index of the corpus with its own docshelf.toml named explicitly."""
    config = corpus / "docshelf.toml"
    settings = load_settings(config)
    settings.store.data_dir = tmp_path / f"ref-{tag}"
    with Shelf(settings, embedder=HashEmbedder(), config_path=config, config_explicit=True) as shelf:
        shelf.index([corpus])
    return _snapshot(tmp_path / f"ref-{tag}")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with its own, different docshelf.toml; every door runs from here."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "docshelf.toml").write_text(OTHER_TOML, "utf-8")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    return folder


@pytest.mark.anyio
async def test_every_door_indexes_with_the_collections_settings(tmp_path: Path, elsewhere: Path) -> None:
    corpus, data = tmp_path / "corpus", tmp_path / "data"
    _write_corpus(corpus, 1)
    cli = CliRunner()
    first = cli.invoke(app, ["index", str(corpus), "--data-dir", str(data), "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["collection"] == "handbook"
    snap = _snapshot(data)
    assert snap == _reference(tmp_path, corpus, "1") and "drafts/secret.md" not in snap
    assert len(snap["guide.md"]) > 4  # 40-token chunks, not the working directory's 300

    # MCP reindex from a server whose own settings are the working directory's
    _write_corpus(corpus, 2)
    settings = load_settings(elsewhere / "docshelf.toml")
    settings.store.data_dir = data
    shelf = Shelf(settings, embedder=HashEmbedder(), config_path=elsewhere / "docshelf.toml")
    try:
        async with Client(create_server(settings, shelf)) as client:
            result = await client.call_tool("reindex", {})
            assert not result.is_error, result.content
    finally:
        shelf.close()
    assert _snapshot(data) == _reference(tmp_path, corpus, "2")

    # watch (one sync of its loop) from a shelf with the working directory's settings
    _write_corpus(corpus, 3)
    with Shelf(settings, embedder=HashEmbedder(), config_path=elsewhere / "docshelf.toml") as watching:
        watching.watcher("handbook").sync_fn()
    assert _snapshot(data) == _reference(tmp_path, corpus, "3")

    # the CLI again, from the working directory, without naming the corpus: the recorded settings win
    _write_corpus(corpus, 4)
    again = cli.invoke(app, ["index", "-c", "handbook", "--data-dir", str(data)])
    assert again.exit_code == 0, again.output
    assert "differ from those recorded" in again.stderr and "chunk.max_tokens" in again.stderr
    assert _snapshot(data) == _reference(tmp_path, corpus, "4")

    status = json.loads(cli.invoke(app, ["status", "--json", "--data-dir", str(data)]).stdout)
    handbook = next(c for c in status["collections"] if c["name"] == "handbook")
    assert handbook["settings_origin"] == str(corpus / "docshelf.toml")
    assert handbook["settings"]["chunk"]["max_tokens"] == 40
    assert handbook["settings"]["sources"]["exclude"] == ["drafts/"]


def test_an_explicit_config_says_what_changed_and_rechunks(tmp_path: Path, elsewhere: Path) -> None:
    corpus, data = tmp_path / "corpus", tmp_path / "data"
    _write_corpus(corpus, 1)
    cli = CliRunner()
    assert cli.invoke(app, ["index", str(corpus), "--data-dir", str(data)]).exit_code == 0
    before = _snapshot(data)
    wider = tmp_path / "wider.toml"
    wider.write_text('collection = "handbook"\n\n[chunk]\nmax_tokens = 120\noverlap_tokens = 4\n', "utf-8")
    result_args = ["index", str(corpus), "--config", str(wider), "--data-dir", str(data)]
    result = cli.invoke(app, [*result_args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert "chunk.max_tokens: 40 -> 120" in report["settings_changes"]
    assert 'sources.exclude: ["drafts/"] -> []' in report["settings_changes"]
    after = _snapshot(data)
    assert len(after["guide.md"]) < len(before["guide.md"])  # every file re-chunked with the new size
    assert "drafts/secret.md" in after  # the exclusion was dropped with the old settings
    again = cli.invoke(app, ["index", "--config", str(wider), "--data-dir", str(data), "--json"])
    assert json.loads(again.stdout)["settings_changes"] == []  # the same file twice changes nothing
