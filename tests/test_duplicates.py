"""A passage found word for word in several places is one hit that lists the others (``also_in``).

Found on /usr/share/doc/bash, where CHANGES.gz and changelog.gz hold the same text: each hit of a
search came twice, and ten hits were five passages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.server import create_server
from docshelf.shelf import SearchRequest, Shelf
from mcpkit import data

pytestmark = pytest.mark.usefixtures("backend")

_TOPICS = ["wombat", "quokka", "numbat", "bilby", "dunnart", "potoroo"]


def _paragraph(topic: str) -> str:
    return f"The {topic} burrow survey counts every {topic} seen at dusk along the ridge track."


def _corpus(root: Path) -> Path:
    """``notes.md`` and its copy ``backup/notes.md``; ``other.md`` shares none of their text."""
    docs = root / "docs"
    (docs / "backup").mkdir(parents=True)
    notes = "\n\n".join(f"# {t.title()}\n\n{_paragraph(t)}" for t in _TOPICS[:3]) + "\n"
    (docs / "notes.md").write_text(notes)
    (docs / "backup" / "notes.md").write_text(notes)
    (docs / "other.md").write_text(
        "\n\n".join(f"# {t.title()}\n\n{_paragraph(t)} Also rain." for t in _TOPICS) + "\n"
    )
    return docs


def _search(shelf: Shelf, query: str, k: int = 10) -> list[tuple[str, str, list[str]]]:
    hits = shelf.search(SearchRequest(query, k=k, mode="keyword")).hits
    return [(h.path, h.text, [d.citation for d in h.also_in]) for h in hits]


def test_a_copied_file_gives_one_hit_that_names_the_copy(shelf: Shelf, tmp_path: Path) -> None:
    shelf.index([_corpus(tmp_path)])
    hits = _search(shelf, "wombat burrow survey")
    texts = [text for _, text, _ in hits]
    assert len(texts) == len(set(texts))  # every hit a different passage
    first = next(h for h in hits if h[1].endswith(_paragraph("wombat")))
    assert {first[0], *(c.split(":")[0] for c in first[2])} == {"notes.md", "backup/notes.md"}
    assert len(first[2]) == 1 and first[2][0].endswith(":1-3")  # the copy's own lines


def test_k_hits_are_k_different_passages(shelf: Shelf, tmp_path: Path) -> None:
    shelf.index([_corpus(tmp_path)])
    hits = _search(shelf, "burrow survey dusk ridge", k=8)
    # 3 passages twice (the copy) and 6 others: 9 passages, of which k are shown
    assert len(hits) == 8 and len({text for _, text, _ in hits}) == 8
    assert sum(bool(also) for _, _, also in hits) == 3


def test_a_paragraph_repeated_in_one_file_names_its_other_lines(shelf: Shelf, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    boiler = "Contact the bilbyboiler desk before any change to the rota."
    (docs / "policy.md").write_text(
        f"## Contact\n\n{boiler}\n\n## Other\n\nOther text here.\n\n## Contact\n\n{boiler}\n"
    )
    shelf.index([docs])
    hits = shelf.search(SearchRequest("bilbyboiler", mode="keyword")).hits
    assert len(hits) == 1 and [d.path for d in hits[0].also_in] == ["policy.md"]
    assert {hits[0].line_start, hits[0].also_in[0].line_start} == {1, 9}


def test_the_setting_off_shows_every_copy(settings: Settings, tmp_path: Path) -> None:
    settings.search.collapse_duplicates = False
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([_corpus(tmp_path)])
        hits = _search(shelf, "wombat burrow survey")
    assert [path for path, text, _ in hits if text.endswith(_paragraph("wombat"))] in (
        ["notes.md", "backup/notes.md"],
        ["backup/notes.md", "notes.md"],
    )
    assert all(not also for _, _, also in hits)


@pytest.mark.anyio
async def test_an_agent_gets_the_other_places_in_the_compact_hit(
    settings: Settings, shelf: Shelf, tmp_path: Path
) -> None:
    shelf.index([_corpus(tmp_path)])
    async with Client(create_server(settings, shelf)) as client:
        out = data(await client.call_tool("search", {"query": "wombat burrow survey", "mode": "keyword"}))
    first = out["hits"][0]
    assert first["citation"].split(":")[0] in ("notes.md", "backup/notes.md")
    assert len(first["also_in"]) == 1 and first["also_in"][0] != first["citation"]
    assert all("also_in" not in h for h in out["hits"] if "other.md" in h["citation"])


def test_the_cli_prints_where_else_the_passage_is(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env |= {
        "DOCSHELF_EMBED__MODEL": "hash",
        "DOCSHELF_STORE__DATA_DIR": str(tmp_path / "data"),
        "COLUMNS": "100",
    }
    cmd = [sys.executable, "-m", "docshelf"]
    subprocess.run([*cmd, "index", str(docs)], env=env, capture_output=True, text=True, check=True)
    search = [*cmd, "search", "wombat burrow survey", "--mode", "keyword", "-k", "3", "--no-helper"]
    shown = subprocess.run(search, env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    blocks = shown.stdout.split("\n\n")
    first = next(b for b in blocks if "notes.md:" in b.splitlines()[0])
    other = "backup/notes.md:1-3" if "backup/" not in first.splitlines()[0] else "notes.md:1-3"
    assert first.splitlines()[-1].strip() == f"also in {other}"
    as_json = subprocess.run([*search, "--json"], env=env, capture_output=True, text=True)
    hit = json.loads(as_json.stdout)["hits"][0]
    assert [d["citation"] for d in hit["also_in"]] == [other]


@pytest.mark.anyio
async def test_a_passage_copied_many_times_lists_a_few_places_and_counts_the_rest(
    settings: Settings, shelf: Shelf, tmp_path: Path
) -> None:
    from docshelf.shelf.budget import estimate_tokens

    docs = tmp_path / "docs"
    for i in range(30):
        (docs / f"v{i}").mkdir(parents=True)
        (docs / f"v{i}" / "LICENSE.md").write_text(
            "# Licence\n\nThe quollicence terms apply to every copy.\n"
        )
    shelf.index([docs])
    assert len(shelf.search(SearchRequest("quollicence", mode="keyword")).hits[0].also_in) == 29
    settings.server.max_result_tokens = 1000
    async with Client(create_server(settings, shelf)) as client:
        for args in ({}, {"detail": "full", "with_text": True}):
            page = await client.call_tool("search", {"query": "quollicence", "mode": "keyword", **args})
            out = data(page)
            assert len(out["hits"]) == 1 and len(out["hits"][0]["also_in"]) == 5
            assert out["hits"][0]["also_in_more"] == 24
            assert estimate_tokens(page.content[0].text) <= 1000  # type: ignore[union-attr]
