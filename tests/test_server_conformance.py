"""What the MCP conformance suite checks only loosely (bench/mcp_conformance.py runs the suite itself):
error codes of unknown names and bad levels, and log notifications per session and per request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from docshelf.config import Settings
from docshelf.server import create_server
from docshelf.shelf import Shelf
from mcpkit import data

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_unknown_tool_is_invalid_params(settings: Settings, indexed_shelf: Shelf, mode: str) -> None:
    """The spec's protocol error for an unknown tool (-32602), naming the tools there are; a
    read-only server says why a write tool is missing."""
    async with Client(create_server(settings, indexed_shelf), mode=mode) as c:
        with pytest.raises(MCPError) as info:
            await c.call_tool("serch", {"query": "x"})
        assert info.value.code == -32602
        assert "'serch'" in info.value.message and "search" in info.value.message
        assert "\n" not in info.value.message
    settings.server.read_only = True
    async with Client(create_server(settings, indexed_shelf), mode=mode) as c:
        with pytest.raises(MCPError) as info:
            await c.call_tool("ingest", {"path": "/tmp"})
        assert info.value.code == -32602 and "--read-only" in info.value.message


async def test_bad_log_level_is_invalid_params(settings: Settings, indexed_shelf: Shelf) -> None:
    async with Client(create_server(settings, indexed_shelf), mode="legacy") as c:
        with pytest.raises(MCPError) as info:
            # raw: the SDK's typed request refuses the bad level before sending it
            await c.session._dispatcher.send_raw_request("logging/setLevel", {"level": "loud"}, {})
        assert info.value.code == -32602


def _broken(corpus: Path) -> None:
    (corpus / "notes" / "broken.pdf").write_bytes(b"%PDF-1.4 not really")


def _collector() -> tuple[list[Any], Any]:
    got: list[Any] = []

    async def on_log(params: Any) -> None:
        got.append(params)

    return got, on_log


async def test_log_level_is_per_session(settings: Settings, indexed_shelf: Shelf, corpus: Path) -> None:
    """`logging/setLevel` sets the level of the session that sent it (two HTTP clients share one
    server object): a quiet client does not silence a chatty one, nor the other way round."""
    _broken(corpus)
    server = create_server(settings, indexed_shelf)
    quiet_got, quiet_log = _collector()
    chatty_got, chatty_log = _collector()
    async with (
        Client(server, mode="legacy", logging_callback=quiet_log) as quiet,
        Client(server, mode="legacy", logging_callback=chatty_log) as chatty,
    ):
        await chatty.set_logging_level("info")
        await quiet.set_logging_level("error")
        assert data(await chatty.call_tool("ingest", {"path": str(corpus)}))["skipped"]
        (corpus / "notes" / "broken.pdf").write_bytes(b"%PDF-1.4 still not")
        assert data(await quiet.call_tool("ingest", {"path": str(corpus)}))["skipped"]
    assert any(m.level == "warning" and "broken.pdf" in str(m.data) for m in chatty_got)
    assert not any(m.level in ("info", "warning") for m in quiet_got), quiet_got


@pytest.mark.parametrize("opt_in", ["warning", None])
async def test_2026_logs_only_when_the_request_opts_in(
    settings: Settings, indexed_shelf: Shelf, corpus: Path, opt_in: str | None
) -> None:
    """2026-07-28: no `notifications/message` unless the request's `_meta` asks, then at that level and up."""
    _broken(corpus)
    got, on_log = _collector()
    server = create_server(settings, indexed_shelf)
    async with Client(server, mode="auto", logging_callback=on_log, log_level=opt_in) as c:  # type: ignore[arg-type]
        assert c.protocol_version == "2026-07-28"
        assert data(await c.call_tool("ingest", {"path": str(corpus)}))["skipped"]
    if opt_in is None:
        assert got == []
    else:
        assert any(m.level == "warning" and "broken.pdf" in str(m.data) for m in got)
        assert all(m.level != "info" for m in got)


async def test_a_notice_waits_for_a_client_that_takes_it(settings: Settings, indexed_shelf: Shelf) -> None:
    """A server-wide notice (index damage repaired at start, a model failure) is not used up by a
    request that may not receive it: a 2026 request without the log-level key, or a client whose
    level is above it, leaves it for the next request that takes it."""
    import logging

    server = create_server(settings, indexed_shelf)
    got, on_log = _collector()
    logging.getLogger("docshelf.test").warning("the keyword index was damaged and has been rebuilt")
    async with Client(server, mode="auto", logging_callback=on_log) as silent:
        await silent.call_tool("index_status", {})
    async with Client(server, mode="legacy", logging_callback=on_log) as strict:
        await strict.set_logging_level("error")
        await strict.call_tool("index_status", {})
    assert got == []
    async with Client(server, mode="auto", logging_callback=on_log, log_level="info") as listening:
        await listening.call_tool("index_status", {})
    assert [m.level for m in got] == ["warning"] and "rebuilt" in str(got[0].data)
