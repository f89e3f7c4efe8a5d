"""`docshelf://status` changes reach the clients that asked, 2025-11-25 and 2026 alike; the
capabilities promise no list changes that never come (issue 42, MCP details)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import ResourceUpdatedNotification

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.server import create_server
from docshelf.shelf import Shelf

pytestmark = pytest.mark.anyio
STATUS = "docshelf://status"


def _more(root: Path, name: str) -> None:
    (root / name).write_text(f"# {name}\n\nThe wombat {name} page.\n", "utf-8")


async def test_a_2025_client_that_subscribed_hears_that_the_status_changed(
    settings: Settings, shelf: Shelf, corpus: Path, tmp_path: Path
) -> None:
    shelf.index([corpus])
    heard: list[str] = []
    got = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            heard.append(str(message.params.uri))
            got.set()

    server = create_server(settings, shelf)
    async with Client(server, mode="legacy", message_handler=on_message) as client:
        assert client.protocol_version == "2025-11-25"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # resources/subscribe is deprecated for 2026 clients only
            await client.subscribe_resource(STATUS)
        _more(corpus, "one.md")  # this server's own write: told at once
        await client.call_tool("reindex", {})
        with anyio.fail_after(30):
            await got.wait()
        assert heard == [STATUS]
        got = anyio.Event()
        _more(corpus, "two.md")  # another writer (`docshelf index`, a watcher): told by the poll
        with Shelf(settings, embedder=HashEmbedder()) as other:
            other.index([corpus / "two.md"])
        with anyio.fail_after(30):
            await got.wait()
        assert heard == [STATUS, STATUS]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.unsubscribe_resource(STATUS)


async def test_a_2026_client_listening_hears_another_writers_change(
    settings: Settings, shelf: Shelf, corpus: Path
) -> None:
    shelf.index([corpus])
    server = create_server(settings, shelf)
    async with Client(server, mode="auto") as client:
        assert client.protocol_version != "2025-11-25"
        async with client.listen(resource_subscriptions=[STATUS]) as events:
            _more(corpus, "three.md")
            with Shelf(settings, embedder=HashEmbedder()) as other:
                other.index([corpus / "three.md"])
            with anyio.fail_after(30):
                async for event in events:
                    assert STATUS in str(event)
                    break


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_capabilities_promise_no_list_changes_and_offer_status_updates(
    settings: Settings, shelf: Shelf, corpus: Path, mode: str
) -> None:
    """The tools, prompts and resources a server offers are fixed at its start."""
    shelf.index([corpus])
    async with Client(create_server(settings, shelf), mode=mode) as client:  # type: ignore[arg-type]
        caps = client.server_capabilities
        assert caps is not None and caps.tools and caps.prompts and caps.resources
        assert not caps.tools.list_changed and not caps.prompts.list_changed
        assert not caps.resources.list_changed and caps.resources.subscribe
