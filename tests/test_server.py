"""The MCP server in-process, through the SDK's Client, in both protocol eras (auto=2026, legacy=2025)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference, ResourceTemplateReference

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.embed.base import Vectors
from docshelf.server import build_server, create_server
from docshelf.server.resources import DOCUMENT_TEMPLATE
from docshelf.shelf import Shelf
from localhttp import Reply, serve
from mcpkit import data, error_text

# the same tests run against the embedded store and PostgreSQL + pgvector
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("backend")]
MODES = ["auto", "legacy"]
ALL_TOOLS = {"search", "read_passage", "read_document", "list_documents", "index_status", "grep"}
WRITE_TOOLS = {"ingest", "forget", "reindex"}


@pytest.fixture
def server(settings: Settings, indexed_shelf: Shelf) -> MCPServer:
    return create_server(settings, indexed_shelf)


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, server: MCPServer) -> AsyncIterator[Client]:
    async with Client(server, mode=request.param) as c:
        yield c


async def test_tools_are_described(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == ALL_TOOLS | WRITE_TOOLS
    for tool in tools.values():
        assert tool.title and tool.description and "\n" not in tool.description
        assert tool.output_schema and tool.annotations
        assert tool.annotations.open_world_hint is (tool.name == "ingest")  # a URL reaches the web
        assert tool.annotations.read_only_hint is (tool.name in ALL_TOOLS)
        # ingest and reindex drop documents whose files are gone: destructive, like forget
        assert tool.annotations.destructive_hint is (tool.name in WRITE_TOOLS)
    assert 'collection "test": 8 documents' in (client.instructions or "")


async def test_read_only_server_has_no_write_tools(settings: Settings, indexed_shelf: Shelf) -> None:
    settings.server.read_only = True
    async with Client(create_server(settings, indexed_shelf)) as c:
        assert {t.name for t in (await c.list_tools()).tools} == ALL_TOOLS


async def test_search_hits_cite_and_page(client: Client) -> None:
    out = data(await client.call_tool("search", {"query": "数据备份", "k": 1}))
    hit = out["hits"][0]
    assert hit["citation"].startswith("notes/数据备份策略.md:")
    assert set(hit) <= {"chunk_id", "citation", "heading", "confidence", "matched", "snippet"}
    assert out["next_cursor"]
    full = data(await client.call_tool("search", {"query": "数据备份", "k": 1, "detail": "full"}))["hits"][0]
    assert full["path"] == "notes/数据备份策略.md" and full["uri"].startswith("docshelf://test/notes/")
    assert "text" not in full
    more = data(await client.call_tool("search", {"query": "数据备份", "k": 1, "cursor": out["next_cursor"]}))
    assert more["hits"] and more["hits"][0]["chunk_id"] != hit["chunk_id"]
    full = data(
        await client.call_tool("search", {"query": "deploy", "with_text": True, "path_glob": "runbooks/*"})
    )
    assert all(h["text"] and h["path"].startswith("runbooks/") for h in full["hits"])
    none = data(await client.call_tool("search", {"query": "deploy", "collections": ["nope"]}))
    assert none["hits"] == [] and "nope" in none["note"]
    one = data(await client.call_tool("search", {"query": "deploy", "collections": "test", "tags": "deploy"}))
    assert one["hits"]  # one name for a list: it was refused with "cannot be 'test'"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": 123}, "query"),
        ({}, "query"),
        ({"query": "x", "cursor": "garbage!"}, "cursor"),
    ],
)
async def test_search_bad_arguments_explain(client: Client, args: dict[str, Any], expected: str) -> None:
    assert expected in error_text(await client.call_tool("search", args))
    assert data(await client.call_tool("index_status", {}))["documents"] == 8  # connection still fine


async def test_read_passage_with_neighbours(client: Client) -> None:
    hit = data(await client.call_tool("search", {"query": "rolling back dashboard", "k": 1}))["hits"][0]
    out = data(await client.call_tool("read_passage", {"chunk_id": hit["chunk_id"], "before": 1, "after": 1}))
    targets = [p for p in out["passages"] if p["is_target"]]
    assert len(targets) == 1 and targets[0]["chunk_id"] == hit["chunk_id"]
    assert len(out["passages"]) >= 2 and all(":" in p["citation"] for p in out["passages"])
    assert "unknown chunk id" in error_text(await client.call_tool("read_passage", {"chunk_id": "f" * 32}))
    assert "before" in error_text(await client.call_tool("read_passage", {"chunk_id": "x", "before": -1}))


async def test_read_passage_takes_a_hits_citation(client: Client) -> None:
    """Agents quote citations (`runbooks/deploy.md:12-30`) more than ids: the citation reads the
    same passage, and one that names no passage says how to read those lines instead."""
    hits = data(await client.call_tool("search", {"query": "rolling back dashboard", "k": 3}))["hits"]
    for hit in hits:
        out = data(await client.call_tool("read_passage", {"chunk_id": hit["citation"], "after": 1}))
        targets = [p for p in out["passages"] if p["is_target"]]
        assert [t["chunk_id"] for t in targets] == [hit["chunk_id"]]
        assert out["path"] == hit["citation"].rsplit(":", 1)[0]
    path = hits[0]["citation"].rsplit(":", 1)[0]
    missing = error_text(await client.call_tool("read_passage", {"chunk_id": f"{path}:90000-90004"}))
    assert "no passage" in missing and "read_document" in missing
    assert "no document" in error_text(await client.call_tool("read_passage", {"chunk_id": "nope.md:1-4"}))


async def test_read_document_ranges(client: Client) -> None:
    out = data(await client.call_tool("read_document", {"document": "runbooks/deploy.md"}))
    assert out["source"] == "file" and out["text"].startswith("---\ntitle: Deploy guide")
    lines = data(
        await client.call_tool("read_document", {"document": out["uri"], "start_line": 7, "end_line": 7})
    )
    assert lines["text"] == "# Deploy guide\n" and lines["citation"] == "runbooks/deploy.md:7-7"
    by_id = data(
        await client.call_tool("read_document", {"document": out["doc_id"], "start_char": 4, "end_char": 9})
    )
    assert by_id["text"] == "title"
    absolute = str(Path(data(await client.call_tool("index_status", {}))["collections"][0]["roots"][0]))
    by_abs = data(await client.call_tool("read_document", {"document": absolute + "/runbooks/deploy.md"}))
    assert by_abs["doc_id"] == out["doc_id"]
    assert "no document 'nope.md'" in error_text(
        await client.call_tool("read_document", {"document": "nope.md"})
    )
    assert "past the end" in error_text(
        await client.call_tool("read_document", {"document": "runbooks/deploy.md", "start_line": 999})
    )


@pytest.mark.parametrize(
    "bad",
    [
        "../secret.md",
        "runbooks/../../secret.md",
        "/etc/passwd",
        "%2e%2e/secret.md",
        "..\\secret.md",
        "C:\\x.md",
    ],
)
async def test_read_document_refuses_escapes(client: Client, bad: str) -> None:
    assert "refused" in error_text(await client.call_tool("read_document", {"document": bad}))


async def test_symlink_swapped_in_after_indexing_is_refused(
    settings: Settings, indexed_shelf: Shelf, corpus: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("top secret", "utf-8")
    target = corpus / "runbooks" / "deploy.md"
    target.unlink()
    os.symlink(secret, target)
    async with Client(create_server(settings, indexed_shelf)) as c:
        text = error_text(await c.call_tool("read_document", {"document": "runbooks/deploy.md"}))
        assert "outside the corpus root" in text and "top secret" not in text
        with pytest.raises(MCPError):
            await c.read_resource("docshelf://test/runbooks/deploy.md")


async def test_missing_file_is_rebuilt_from_chunks(
    settings: Settings, indexed_shelf: Shelf, corpus: Path
) -> None:
    (corpus / "runbooks" / "deploy.md").unlink()
    async with Client(create_server(settings, indexed_shelf)) as c:
        out = data(await c.call_tool("read_document", {"document": "runbooks/deploy.md"}))
        assert out["source"] == "index" and "Rolling back" in out["text"] and "cannot be read" in out["note"]
        stale = data(await c.call_tool("index_status", {}))["stale"]
        assert stale == [
            {"collection": "test", "path": "runbooks/deploy.md", "reason": "missing or unreadable"}
        ]


async def test_index_status_lists_new_files(settings: Settings, indexed_shelf: Shelf, corpus: Path) -> None:
    (corpus / "runbooks" / "added.md").write_text("# Added\n\nSince the last sync.\n")
    async with Client(create_server(settings, indexed_shelf)) as c:
        out = data(await c.call_tool("index_status", {}))
    assert out["new_files"] == 1 and out["stale_documents"] == 0
    assert out["stale"] == [{"collection": "test", "path": "runbooks/added.md", "reason": "new"}]


async def test_size_cap_truncates_with_cursor(settings: Settings, indexed_shelf: Shelf, corpus: Path) -> None:
    from docshelf.shelf.budget import estimate_tokens

    settings.server.max_result_tokens = 1000
    (corpus / "big.md").write_text("# Big\n\n" + "\n".join(f"line {i} of the big file" for i in range(2000)))
    # escapes cost more in JSON than in the text: results came back at twice the cap
    # (numbered: identical chunks would fold into one hit)
    (corpus / "quotes.txt").write_text("\n".join('\t\t"q" \\ "\\"\t' * 8 + str(i) for i in range(3000)))
    indexed_shelf.index([], "test")
    async with Client(create_server(settings, indexed_shelf)) as c:
        first = await c.call_tool("read_document", {"document": "big.md"})
        out = data(first)
        assert out["next_cursor"] and "size cap" in out["note"] and out["text"].endswith("\n")
        assert estimate_tokens(first.content[0].text) <= 1000  # type: ignore[union-attr]
        quoted = await c.call_tool("read_document", {"document": "quotes.txt"})
        assert data(quoted)["next_cursor"] and estimate_tokens(quoted.content[0].text) <= 1000  # type: ignore[union-attr]
        # a hit too big for the cap: shortened, not dropped (the cursor pointed at itself, for ever)
        args: dict[str, Any] = {"query": "q", "k": 3, "with_text": True, "detail": "full"}
        seen_ids: list[str] = []
        for _ in range(5):
            page = await c.call_tool("search", args)
            got = data(page)
            assert got["hits"] and estimate_tokens(page.content[0].text) <= 1000  # type: ignore[union-attr]
            seen_ids += [h["chunk_id"] for h in got["hits"]]
            if not got["next_cursor"]:
                break
            args = {**args, "cursor": got["next_cursor"]}
        assert len(seen_ids) == len(set(seen_ids)) >= 3  # every page moves on
        seen, cursor = out["text"], out["next_cursor"]
        for _ in range(200):
            if not cursor:
                break
            page = data(await c.call_tool("read_document", {"document": "big.md", "cursor": cursor}))
            seen, cursor = seen + page["text"], page["next_cursor"]
        assert seen == (corpus / "big.md").read_text()
        hits = data(await c.call_tool("search", {"query": "big file line", "k": 50, "with_text": True}))
        assert hits["next_cursor"] and "size cap" in hits["note"]


async def test_list_documents_pages(settings: Settings, indexed_shelf: Shelf) -> None:
    settings.server.page_size = 3
    async with Client(create_server(settings, indexed_shelf)) as c:
        rows: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = data(await c.call_tool("list_documents", {"cursor": cursor} if cursor else {}))
            rows += page["documents"]
            cursor = page["next_cursor"]
            if not cursor:
                break
        assert len(rows) == page["total"] == 8 and len({r["path"] for r in rows}) == 8
        notes = data(await c.call_tool("list_documents", {"path_glob": "notes/*", "limit": 50}))
        assert {r["path"] for r in notes["documents"]} >= {"notes/glossary.txt", "notes/urlaubsregelung.md"}
        assert "known collections: test" in error_text(
            await c.call_tool("list_documents", {"collection": "x"})
        )


async def test_index_status(client: Client) -> None:
    out = data(await client.call_tool("index_status", {}))
    assert out["model"] == "hash-64" and out["documents"] == 8 and out["stale"] == []
    assert out["collections"][0]["last_build"]["added"] == 8
    assert out["server"]["read_only"] is False


async def test_resources(client: Client) -> None:
    listed = (await client.list_resources()).resources
    assert [str(r.uri) for r in listed] == ["docshelf://status"]
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == [DOCUMENT_TEMPLATE]
    status = json.loads((await client.read_resource("docshelf://status")).contents[0].text)  # type: ignore[union-attr]
    assert status["documents"] == 8
    doc = await client.read_resource(
        "docshelf://test/notes/%E6%95%B0%E6%8D%AE%E5%A4%87%E4%BB%BD%E7%AD%96%E7%95%A5.md"
    )
    assert "数据备份策略" in doc.contents[0].text  # type: ignore[union-attr]
    for uri in (
        "docshelf://test/nope.md",
        "docshelf://test/../../etc/passwd",
        "docshelf://test/a/%2E%2E/%2E%2E/x",
    ):
        with pytest.raises(MCPError) as info:
            await client.read_resource(uri)
        assert info.value.code == -32602  # the spec's "resource not found"


async def test_prompt_and_completions(client: Client) -> None:
    prompts = (await client.list_prompts()).prompts
    assert [p.name for p in prompts] == ["answer_with_citations"]
    got = await client.get_prompt("answer_with_citations", {"question": "Wie viele Urlaubstage?"})
    text = got.messages[0].content.text  # type: ignore[union-attr]
    assert "Wie viele Urlaubstage?" in text and "search" in text and "cite" in text
    ref = ResourceTemplateReference(uri=DOCUMENT_TEMPLATE)
    assert (await client.complete(ref, {"name": "collection", "value": "t"})).completion.values == ["test"]
    paths = (
        await client.complete(ref, {"name": "path", "value": "runbooks/"}, {"collection": "test"})
    ).completion
    assert set(paths.values) == {
        "runbooks/deploy.md",
        "runbooks/deploy-old.md",
        "runbooks/incident-response.md",
    }
    assert (
        "notes/urlaubsregelung.md"
        in (await client.complete(ref, {"name": "path", "value": "urlaub"})).completion.values
    )
    prompt_ref = PromptReference(name="answer_with_citations")
    assert (await client.complete(prompt_ref, {"name": "question", "value": "x"})).completion.values == []


async def test_write_tools(settings: Settings, indexed_shelf: Shelf, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    settings.server.allow_ingest = [tmp_path]
    async with Client(create_server(settings, indexed_shelf)) as client:
        await _write_tools(client, extra)


async def _write_tools(client: Client, extra: Path) -> None:
    (extra / "faq.md").write_text("# FAQ\n\nThe parking garage opens at seven.\n", "utf-8")
    events: list[tuple[float, float | None, str | None]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        events.append((progress, total, message))

    out = data(await client.call_tool("ingest", {"path": str(extra)}, progress_callback=progress))
    assert out["added"] == 1 and events and events[-1][0] == events[-1][1]
    assert out["collection"] == "extra"  # a new folder gets its own collection, not the default
    hit = data(await client.call_tool("search", {"query": "parking garage", "k": 1}))["hits"][0]
    assert hit["citation"].startswith("faq.md:")
    assert "relative" in error_text(await client.call_tool("ingest", {"path": "extra"}))
    gone = data(await client.call_tool("forget", {"document": "faq.md"}))
    assert gone["removed_paths"] == ["faq.md"]
    assert "no document" in error_text(await client.call_tool("forget", {"document": "faq.md"}))
    again = data(await client.call_tool("reindex", {}, progress_callback=progress))
    assert again["added"] == 1 and again["unchanged"] == 8  # forget lasts until the next reindex


async def test_ingest_refuses_a_folder_of_one_collection_under_another_name(
    client: Client, corpus: Path
) -> None:
    """An agent could index an indexed folder again as a new collection: the files twice, and the
    user's next `docshelf index FOLDER` went to the agent's collection."""
    text = error_text(await client.call_tool("ingest", {"path": str(corpus / "notes"), "collection": "../x"}))
    assert "already indexed in collection 'test'" in text
    out = data(await client.call_tool("ingest", {"path": str(corpus / "notes")}))  # its own: fine
    assert out["collection"] == "test"


async def test_ingest_a_url_through_the_same_code_as_the_cli(client: Client, settings: Settings) -> None:
    """MCP ingest of a web page: fetched into its mirror and searchable, cited by its URL; an
    agent reaches a local address (here 127.0.0.1) only where the user allowed it."""
    page = b"<html><head><title>Bikes</title></head><body><p>Bicycles go in the courtyard rack.</p>"
    routes = {
        "/robots.txt": lambda r: Reply(404),
        "/bikes.html": lambda r: Reply(200, page, {"Content-Type": "text/html"}),
    }
    web = settings.web.model_copy(update={"agent_private_hosts": True})
    trusted = settings.model_copy(update={"web": web})
    # a second server over the same index: another client's, whose user allowed local addresses
    with Shelf(trusted, embedder=HashEmbedder()) as other:
        with serve(routes) as site:  # type: ignore[arg-type]
            # an error, as a refused path is (it was a result: isError false, added 0, no note)
            refused = error_text(await client.call_tool("ingest", {"path": f"{site.base}/bikes.html"}))
            assert "nothing was fetched" in refused and "local or private address" in refused, refused
            assert site.accepted == []  # refused before connecting: not even robots.txt
            allowed = create_server(trusted, other)
            async with Client(allowed) as trusting:
                args = {"path": f"{site.base}/bikes.html", "collection": "web"}
                out = data(await trusting.call_tool("ingest", args))
        assert out["added"] == 1 and out["collection"] == "web"
        found = await client.call_tool("search", {"query": "courtyard rack", "k": 1, "detail": "full"})
        hit = data(found)["hits"][0]
        assert hit["collection"] == "web" and hit["citation"] == f"{site.base}/bikes.html"
        with serve({}) as gone:  # nothing there: an error that says why
            async with Client(allowed) as trusting:
                text = error_text(await trusting.call_tool("ingest", {"path": f"{gone.base}/nothing.html"}))
        assert "nothing was fetched" in text and "HTTP 404" in text, text
    text = error_text(await client.call_tool("ingest", {"path": "file:///etc/passwd"}))
    assert "file: URLs are not fetched" in text and "/etc/passwd" in text and "relative" not in text, text


class GatedEmbedder(HashEmbedder):
    """Hash vectors, but the 'model' loads only when the test opens the gate."""

    def __init__(self) -> None:
        super().__init__()
        self.gate, self.loaded = threading.Event(), False

    def embed_query(self, text: str) -> Vectors:
        if not self.loaded:
            self.gate.wait(60)
            self.loaded = True
        return super().embed_query(text)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return super().embed_documents(texts)


async def test_search_before_model_is_ready_falls_back(settings: Settings, indexed_shelf: Shelf) -> None:
    """A search while the model loads answers from the keyword side at once: it returns while the
    model is still held at its gate (waiting for it would only end when the gate times out)."""
    settings.server.model_wait_s = 0
    slow = GatedEmbedder()
    try:
        async with Client(create_server(settings, Shelf(settings, embedder=slow))) as c:
            out = data(await c.call_tool("search", {"query": "deploy"}))
            assert not slow.loaded
            assert out["mode"] == "keyword" and "still loading" in out["note"] and out["hits"]
    finally:
        slow.gate.set()


@pytest.mark.slow  # the real USE model
async def test_default_model_loads_in_background(
    settings: Settings, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real USE model: the server is up before the model, then search goes cross-lingual."""
    import threading

    settings.embed.model = "use"
    with Shelf(settings) as writer:
        writer.index([corpus], "test")
    from docshelf.embed import use

    loaded_on: list[str] = []
    real = use.UseEmbedder.embed_query

    def embed_query(self: use.UseEmbedder, text: str) -> Vectors:
        loaded_on.append(threading.current_thread().name)
        return real(self, text)

    monkeypatch.setattr(use.UseEmbedder, "embed_query", embed_query)
    server, state = build_server(settings)
    try:
        async with Client(server) as c:
            assert (await c.list_tools()).tools  # the server answers while the model loads
            await anyio.to_thread.run_sync(state.wait_for_model)  # a loaded machine may need > model_wait_s
            out = data(
                await c.call_tool("search", {"query": "How often are the databases backed up?", "k": 3})
            )
            assert out["mode"] == "hybrid" and out["note"] is None
            assert "notes/数据备份策略.md" in {h["citation"].split(":")[0] for h in out["hits"]}
        assert loaded_on[0] == "docshelf-model"  # the weights load there, never on the thread that serves
    finally:
        state.close()


async def test_missing_index_serves_and_says_what_to_run(settings: Settings) -> None:
    """No index yet: the server starts and every tool answers what to run (it used to exit)."""
    if settings.store.url:  # a database always exists; an unreachable one is the failure to explain
        settings.store.url = "postgresql://postgres@127.0.0.1:9/nowhere"
        await _serves_the_error(settings, r"cannot open the PostgreSQL store .*check that the server")
        return
    async with Client(create_server(settings)) as c:
        assert "no index exists" in (c.instructions or "")
        for name, args in [("search", {"query": "x"}), ("index_status", {}), ("list_documents", {})]:
            assert "docshelf index PATH" in error_text(await c.call_tool(name, args))
    assert not (settings.store.data_dir / "docshelf.db").exists()  # nothing was created on the way


def test_token_estimate_is_cautious_for_cjk() -> None:
    from docshelf.server.limits import estimate_tokens, prefix_within

    assert estimate_tokens("数据" * 100) > estimate_tokens("ab" * 100) * 3
    assert prefix_within("x" * 100, 10) == 40 and prefix_within("数" * 100, 10) == 10


async def _serves_the_error(settings: Settings, pattern: str) -> None:
    """The server starts; its instructions and every tool say why the index cannot be used (it
    used to exit at start, which a client shows only as "connection closed")."""
    import re

    server, shelf = build_server(settings)
    try:
        async with Client(server) as c:
            assert re.search(pattern, c.instructions or ""), c.instructions
            for name, args in [("search", {"query": "x"}), ("index_status", {}), ("list_documents", {})]:
                result = await c.call_tool(name, args)
                assert result.is_error and re.search(pattern, error_text(result)), name
    finally:
        shelf.close()


async def test_damaged_database_is_a_clear_error_at_start(settings: Settings) -> None:
    """A file that is not a database: every answer names the folder and what to do."""
    if settings.store.url:
        pytest.skip("a damaged SQLite file: the PostgreSQL store does not read one")
    settings.store.data_dir.mkdir(parents=True)
    (settings.store.data_dir / "docshelf.db").write_bytes(b"this is not an SQLite database" * 100)
    await _serves_the_error(settings, "cannot open the index at .* it is damaged")
