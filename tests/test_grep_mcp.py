"""grep through a real MCP client, over every format an agent meets: the place of each match is
right (a PDF's page and the line on it), a phrase across two chunks is found, and a pattern that
would make a backtracking engine run for ever returns at once with a note."""

from __future__ import annotations

import itertools
import json
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.server import create_server
from docshelf.shelf import Shelf
from mcpkit import data, error_text
from test_formats import make_docx, make_pdf, make_pptx, make_xlsx

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("backend")]

FILLER = "Plain words that only fill the page so the chunker has text to cut."


def _eml() -> bytes:
    msg = EmailMessage()
    msg["Subject"] = "Key rotation"
    msg["From"] = "ops@example.org"
    msg["To"] = "team@example.org"
    msg.set_content("Hello team,\n\nPlease rotate the Kestrel signing keys before Friday.\n\nThanks\n")
    return msg.as_bytes()


def _ipynb() -> bytes:
    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Analysis\n", "Load the data first.\n"]},
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": 1,
                "outputs": [],
                "source": ["import widgets\n", "widgets.frobnicate_widget(42)\n"],
            },
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb).encode()


@pytest.fixture
def formats(tmp_path: Path) -> Path:
    root = tmp_path / "formats"
    root.mkdir()
    page2 = [
        "Second page opens here",
        "with a line between",
        "where the flux capacitor needs 1.21 gigawatts",
        FILLER,
    ]
    (root / "report.pdf").write_bytes(make_pdf([[FILLER] * 6, page2]))
    (root / "guide.docx").write_bytes(make_docx())
    (root / "people.xlsx").write_bytes(make_xlsx())
    (root / "deck.pptx").write_bytes(make_pptx())
    (root / "mail.eml").write_bytes(_eml())
    (root / "analysis.ipynb").write_bytes(_ipynb())
    body = "\n\n".join(f"Opening{i} words. {FILLER} Closing{i} words." for i in range(12))
    (root / "long.md").write_text(body + "\n", encoding="utf-8")
    (root / "wide.txt").write_text("a" * 40_000 + "!\n" + "a" * 25 + "\n", encoding="utf-8")
    return root


async def _grep(c: Client, pattern: str, **args: Any) -> dict[str, Any]:
    return data(await c.call_tool("grep", {"pattern": pattern, **args}))


async def test_grep_finds_phrases_in_every_format(settings: Settings, formats: Path) -> None:
    settings.chunk.overlap_tokens = 0  # chunks meet end to end: no chunk holds a phrase across them
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([formats], "test")
        async with Client(create_server(settings, shelf)) as c:
            pdf = (await _grep(c, "FLUX CAPACITOR"))["matches"]
            assert [(m["citation"], m["page"], m["line"]) for m in pdf] == [("report.pdf#page=2", 2, 3)]
            assert pdf[0]["text"][slice(*pdf[0]["spans"][0])] == "flux capacitor"

            for phrase, path in [
                ("Unpack the tarball", "guide.docx"), ("quokka census", "people.xlsx"),
                ("numbat survey", "deck.pptx"), ("Kestrel signing keys", "mail.eml"),
                ("frobnicate_widget(42)", "analysis.ipynb"),
            ]:  # fmt: skip
                found = await _grep(c, phrase)
                assert [m["citation"].rsplit(":", 1)[0] for m in found["matches"]] == [path], phrase
                line = found["matches"][0]
                assert phrase.lower() in line["text"].lower() and not found["scanned"]
                ranged = data(
                    await c.call_tool(
                        "read_document",
                        {"document": path, "start_line": line["line"], "end_line": line["line"]},
                    )
                )
                assert phrase.lower() in ranged["text"].lower(), (phrase, ranged["text"])

            chunks = [
                p.chunk
                for p in shelf.read_passage(shelf.search("Opening5", k=1).hits[0].chunk_id, 9, 9).passages
            ]
            a, b = next((x, y) for x, y in itertools.pairwise(chunks) if y.char_start >= x.char_end)
            phrase = " ".join([*a.text.split()[-2:], b.text.split()[0]])
            assert all(phrase not in x.text for x in chunks)
            across = (await _grep(c, phrase))["matches"]
            assert len(across) == 1 and across[0]["line"] == a.line_end

            files = await _grep(c, "the", output="files_with_matches")
            assert "matches" not in files or files["matches"] is None
            assert {x["path"] for x in files["counts"]} >= {"report.pdf", "guide.docx", "mail.eml"}


async def test_a_catastrophic_regex_returns_with_a_note(settings: Settings, formats: Path) -> None:
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([formats], "test")
        async with Client(create_server(settings, shelf)) as c:
            found = await _grep(c, "(a+)+$", regex=True, path_glob="wide.txt")
            assert [m["citation"] for m in found["matches"]] == ["wide.txt:2"]
            assert found["scanned"] and "time_limit_s" in found["note"]
            long_line = await _grep(c, "a!", path_glob="wide.txt")
            assert (
                long_line["matches"][0]["text"].startswith("…") and len(long_line["matches"][0]["text"]) < 600
            )
            refused = await c.call_tool("grep", {"pattern": r"(a)\1", "regex": True})
            assert "back-references" in error_text(refused)
