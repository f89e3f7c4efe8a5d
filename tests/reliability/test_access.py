"""Access: traversal probes, percent-escaped names, symlinks re-pointed after indexing, HTTP guards.

tests/test_server.py covers the basic refusals (.., absolute, %2e, backslash, drive letter, a file
swapped for a symlink) and tests/test_server_e2e.py the token and Host/Origin checks over HTTP.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

sys.path.insert(0, str(Path(__file__).parent))

from accesskit import probe_all
from crashkit import cli_env

from docshelf.config import Settings
from docshelf.server import create_server
from docshelf.shelf import Shelf

pytestmark = pytest.mark.anyio
SECRET = "TOP-SECRET-0xC0FFEE"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def indexed_shelf(shelf: Shelf, plain_corpus: Path) -> Shelf:
    """The sample corpus with a secret beside it and percent-escaped names in it, indexed as "test"."""
    corpus = plain_corpus
    (corpus.parent / "secret.md").write_text(f"# Secret\n\n{SECRET}\n", "utf-8")
    (corpus / "a%20b.md").write_text("# Escaped\n\nA file whose name holds a percent escape.\n", "utf-8")
    (corpus / "100%25 done.md").write_text("# Done\n\nEverything is finished.\n", "utf-8")
    shelf.index([corpus], "test")
    return shelf


def text_of(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def test_traversal_probes_are_refused_and_never_leak(settings: Settings, indexed_shelf: Shelf) -> None:
    async with Client(create_server(settings, indexed_shelf)) as client:
        assert await probe_all(client, [SECRET, "root:x:0:0"]) == []
        # the guard must not be refusing everything: real paths still read
        ok = await client.call_tool("read_document", {"document": "runbooks/deploy.md"})
        assert not ok.is_error


async def test_percent_escaped_file_names_are_readable(settings: Settings, indexed_shelf: Shelf) -> None:
    async with Client(create_server(settings, indexed_shelf)) as client:
        for name, words in (("a%20b.md", "percent escape"), ("100%25 done.md", "finished")):
            out = await client.call_tool("read_document", {"document": name})
            assert not out.is_error and words in text_of(out), text_of(out)
            uri = out.structured_content["uri"] if out.structured_content else ""
            assert "%25" in uri  # the URI escapes the '%' of the name, once
            resource = await client.read_resource(uri)
            assert words in resource.contents[0].text  # type: ignore[union-attr]


async def test_symlinked_folder_swapped_after_indexing_is_refused(
    settings: Settings, indexed_shelf: Shelf, corpus: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "deploy.md").write_text(f"# Deploy\n\n{SECRET}\n", "utf-8")
    shutil.rmtree(corpus / "runbooks")
    os.symlink(outside, corpus / "runbooks")  # a whole folder now points out of the root
    os.symlink(corpus / "notes", corpus / "inner-link")  # inside -> inside stays fine
    async with Client(create_server(settings, indexed_shelf)) as client:
        refused = await client.call_tool("read_document", {"document": "runbooks/deploy.md"})
        assert refused.is_error and "outside the corpus root" in text_of(refused)
        assert SECRET not in text_of(refused)
        with pytest.raises(MCPError) as info:
            await client.read_resource("docshelf://test/runbooks/deploy.md")
        assert SECRET not in str(info.value)
        hits = await client.call_tool("search", {"query": "deploy", "with_text": True})
        assert SECRET not in text_of(hits)  # stored chunks answer search, the new file never does
        status = await client.call_tool("index_status", {})
        assert SECRET not in text_of(status)
        fine = await client.call_tool("read_document", {"document": "notes/glossary.txt"})
        assert not fine.is_error


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def http_read_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(url, token) of `docshelf serve --http --read-only` over the sample corpus."""
    tmp = tmp_path_factory.mktemp("http")
    shutil.copytree(Path(__file__).parents[2] / "samples" / "corpus", tmp / "corpus")
    env, data = cli_env(tmp), tmp / "data"
    cmd = [sys.executable, "-m", "docshelf"]
    subprocess.run([*cmd, "index", str(tmp / "corpus"), "--data-dir", str(data)], env=env, check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    port = _free_port()
    with (tmp / "stderr.txt").open("w") as stderr:
        proc = subprocess.Popen([*cmd, "serve", "--http", "--read-only", "--port", str(port), "--data-dir",
                                 str(data)], env=env, stderr=stderr)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, (tmp / "stderr.txt").read_text()
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", (data / "server-token").read_text().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize(
    ("case", "expected"),
    [("no token", 401), ("wrong token", 401), ("token as query", 401), ("evil host", 421),
     ("evil origin", 403), ("body over 4 MiB", 413)],
)  # fmt: skip
def test_http_refusals(http_read_only: tuple[str, str], case: str, expected: int) -> None:
    url, token = http_read_only
    good = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"}
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers, target = dict(good), url
    if case == "no token":
        del headers["Authorization"]
    elif case == "wrong token":
        headers["Authorization"] = "Bearer " + token[:-1] + ("x" if token[-1] != "x" else "y")
    elif case == "token as query":
        del headers["Authorization"]
        target = f"{url}?token={token}"
    elif case == "evil host":
        headers["Host"] = "evil.example:80"
    elif case == "evil origin":
        headers["Origin"] = "http://evil.example"
    else:
        body["params"] = {"pad": "x" * (4 * 1024 * 1024 + 1)}
    assert httpx2.post(target, json=body, headers=headers, timeout=30).status_code == expected


def test_http_read_only_server_has_no_write_tools(http_read_only: tuple[str, str]) -> None:
    url, token = http_read_only

    async def main() -> set[str]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            with pytest.raises(MCPError) as refused:  # an unknown tool: the spec's -32602
                await client.call_tool("forget", {"document": "runbooks/deploy.md"})
            assert refused.value.code == -32602 and "--read-only" in refused.value.message
            return names

    names = anyio.run(main)
    assert "search" in names and not names & {"ingest", "forget", "reindex"}
