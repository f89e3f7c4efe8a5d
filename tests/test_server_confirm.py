"""Confirm before destroying: through a real MCP SDK client that answers elicitation, forget of a root
or of more than a few documents, and a reindex or ingest that would drop documents, ask the user
first; declined, nothing changes; a client without elicitation is not asked. Icons ship too."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import ElicitRequestParams, ElicitResult

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.server import create_server
from docshelf.shelf import Shelf
from mcpkit import data

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("backend")]
MODES = ["auto", "legacy"]


class User:
    """An elicitation callback that records each question and answers as told."""

    def __init__(self, answer: str, remove: bool = True) -> None:
        self.answer = answer
        self.remove = remove
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params.message)
        content = {"remove": self.remove} if self.answer == "accept" else None
        return ElicitResult(action=self.answer, content=content)  # type: ignore[arg-type]


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(6):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nSomething about topic {i}.\n", encoding="utf-8")
    return root


def _paths(shelf: Shelf) -> list[str]:
    return sorted(d.path for d in shelf.list_documents())


@pytest.mark.parametrize("mode", MODES)
async def test_forgetting_a_root_asks_and_a_decline_changes_nothing(
    settings: Settings, notes: Path, mode: str
) -> None:
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([notes], "test")
        server = create_server(settings, shelf)
        no = User("decline")
        async with Client(server, mode=mode, elicitation_callback=no) as c:  # type: ignore[arg-type]
            out = data(await c.call_tool("forget", {"document": str(notes)}))
        assert out["removed"] == 0 and "declined" in out["note"]
        assert len(no.asked) == 1 and "6 documents" in no.asked[0] and "n0.md" in no.asked[0]
        assert len(_paths(shelf)) == 6 and shelf.roots("test") == [str(notes)]

        # one document: nothing to ask
        asked = User("accept")
        async with Client(server, mode=mode, elicitation_callback=asked) as c:  # type: ignore[arg-type]
            assert data(await c.call_tool("forget", {"document": "n0.md"}))["removed"] == 1
            assert asked.asked == []
            unsure = User("accept", remove=False)  # accepted the form but left "remove" off
        async with Client(server, mode=mode, elicitation_callback=unsure) as c:  # type: ignore[arg-type]
            assert data(await c.call_tool("forget", {"document": str(notes)}))["removed"] == 0
        assert len(_paths(shelf)) == 5
        async with Client(server, mode=mode, elicitation_callback=asked) as c:  # type: ignore[arg-type]
            out = data(await c.call_tool("forget", {"document": str(notes)}))
        assert out["removed"] == 5 and len(asked.asked) == 1 and _paths(shelf) == []


async def test_a_reindex_that_would_drop_documents_asks_first(settings: Settings, notes: Path) -> None:
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([notes], "test")
        server = create_server(settings, shelf)
        (notes / "n1.md").unlink()
        (notes / "n2.md").unlink()
        (notes / "new.md").write_text("# New\n\nA new note.\n", encoding="utf-8")
        no = User("cancel")
        async with Client(server, elicitation_callback=no) as c:  # type: ignore[arg-type]
            out = data(await c.call_tool("reindex", {}))
        assert out["removed"] == 0 and len(no.asked) == 1 and "2 documents" in no.asked[0]
        assert "n1.md" in _paths(shelf) and "new.md" not in _paths(shelf)  # nothing changed, not even adds

        yes = User("accept")
        async with Client(server, elicitation_callback=yes) as c:  # type: ignore[arg-type]
            out = data(await c.call_tool("reindex", {}))
        assert (out["removed"], out["added"]) == (2, 1) and len(yes.asked) == 1
        assert "n1.md" not in _paths(shelf) and "new.md" in _paths(shelf)

        # nothing to drop: nobody is asked
        async with Client(server, elicitation_callback=yes) as c:  # type: ignore[arg-type]
            assert data(await c.call_tool("reindex", {}))["removed"] == 0
        assert len(yes.asked) == 1


async def test_an_ingest_that_would_drop_documents_asks_and_without_elicitation_nobody_is(
    settings: Settings, notes: Path
) -> None:
    settings.server.allow_ingest = [notes.parent]
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([notes], "test")
        server = create_server(settings, shelf)
        (notes / "n3.md").unlink()
        no = User("decline")
        async with Client(server, elicitation_callback=no) as c:  # type: ignore[arg-type]
            out = data(await c.call_tool("ingest", {"path": str(notes)}))
        assert out["removed"] == 0 and len(no.asked) == 1 and "n3.md" in _paths(shelf)
        async with Client(server) as c:  # a client that cannot be asked: as before, it is done
            out = data(await c.call_tool("ingest", {"path": str(notes)}))
        assert out["removed"] == 1 and "n3.md" not in _paths(shelf)


async def test_the_server_and_its_tools_have_icons_shipped_in_the_package(
    settings: Settings, notes: Path
) -> None:
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([notes], "test")
        async with Client(create_server(settings, shelf), mode="legacy") as c:
            info = c.server_info
            tools = (await c.list_tools()).tools
    assert info.icons and info.icons[0].src.startswith("data:image/svg+xml;base64,")
    assert b"<svg" in base64.b64decode(info.icons[0].src.split(",", 1)[1])
    assert all(t.icons and t.icons[0].mime_type == "image/svg+xml" for t in tools)
    assert len({t.icons[0].src for t in tools if t.icons}) >= 5
