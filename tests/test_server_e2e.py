"""The real `docshelf serve` process: stdio through the MCP Inspector CLI and the SDK, HTTP with the token."""

from __future__ import annotations

import json
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
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from mcpkit import writer_free

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples" / "corpus"
NODE_DIR = ROOT / ".ci" / "node"
INSPECTOR = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "inspector"
INSTALL_HINT = "npm install --no-audit --no-fund --prefix .ci/node @modelcontextprotocol/inspector@0.15.0"


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(DOCSHELF_EMBED__MODEL="hash", XDG_DATA_HOME=str(tmp / "xdg"), PYTHONUNBUFFERED="1")
    return env


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(data dir, env) of the sample corpus indexed by the real CLI with the hash embedder."""
    tmp = tmp_path_factory.mktemp("e2e")
    shutil.copytree(SAMPLES, tmp / "corpus")
    env = _env(tmp)
    data = tmp / "data"
    subprocess.run(
        [sys.executable, "-m", "docshelf", "index", str(tmp / "corpus"), "--data-dir", str(data)],
        env=env, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return data, env


def _serve_cmd(data: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "docshelf", "serve", "--data-dir", str(data), *extra]


def inspector(indexed: tuple[Path, dict[str, str]], *args: str) -> dict[str, Any]:
    data, env = indexed
    npx = shutil.which("npx")
    if npx is None or not INSPECTOR.is_dir():
        pytest.skip(f"MCP Inspector not installed (needs node/npx, then: {INSTALL_HINT})")
    proc = subprocess.run(
        [npx, "--offline", "@modelcontextprotocol/inspector", "--cli", *_serve_cmd(data), *args],
        cwd=NODE_DIR, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_inspector_lists_and_calls_tools(indexed: tuple[Path, dict[str, str]]) -> None:
    tools = inspector(indexed, "--method", "tools/list")["tools"]
    assert {t["name"] for t in tools} >= {"search", "read_passage", "read_document", "list_documents"}
    assert all(t.get("outputSchema") and t.get("annotations") for t in tools)
    found = inspector(
        indexed, "--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=Urlaubstage", "k=2"
    )
    hits = found["structuredContent"]["hits"]
    assert hits and hits[0]["citation"].startswith("notes/urlaubsregelung.md:")
    assert hits[0]["matched"] == ["Urlaubstage"] and 0 < hits[0]["confidence"] <= 1
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]
    refused = inspector(
        indexed,
        "--method",
        "tools/call",
        "--tool-name",
        "read_document",
        "--tool-arg",
        "document=../../etc/passwd",
    )
    assert refused["isError"] is True and "refused" in refused["content"][0]["text"]


def test_inspector_reads_resources_and_prompts(indexed: tuple[Path, dict[str, str]]) -> None:
    doc = inspector(indexed, "--method", "resources/read", "--uri", "docshelf://samples/runbooks/deploy.md")
    assert "# Deploy guide" in doc["contents"][0]["text"]
    prompt = inspector(
        indexed,
        "--method",
        "prompts/get",
        "--prompt-name",
        "answer_with_citations",
        "--prompt-args",
        "question=why",
    )
    assert "why" in prompt["messages"][0]["content"]["text"]


def test_sdk_client_over_stdio(indexed: tuple[Path, dict[str, str]]) -> None:
    """The Python SDK in auto mode negotiates the 2026 era over the same stdio server."""
    data, env = indexed
    cmd = _serve_cmd(data)

    async def main() -> None:
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
        async with Client(params) as client:
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool("search", {"query": "数据备份", "k": 1})
            assert result.structured_content and result.structured_content["hits"]

    anyio.run(main)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def http_server(
    indexed: tuple[Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """(url, token) of a running `docshelf serve --http`."""
    data, env = indexed
    port = _free_port()
    log = tmp_path_factory.mktemp("http") / "stderr.txt"
    with log.open("w") as stderr:
        proc = subprocess.Popen(_serve_cmd(data, "--http", "--port", str(port)), env=env, stderr=stderr)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, log.read_text()
                time.sleep(0.1)
        token = (data / "server-token").read_text().strip()
        assert token in log.read_text()  # printed on first run, for the user to copy
        yield f"http://127.0.0.1:{port}/mcp", token
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_http_needs_the_token(http_server: tuple[str, str]) -> None:
    url, token = http_server
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    assert httpx2.post(url, json=body, headers=headers).status_code == 401
    wrong = {**headers, "Authorization": "Bearer not-the-token"}
    assert httpx2.post(url, json=body, headers=wrong).status_code == 401
    rebind = {**headers, "Authorization": f"Bearer {token}", "Host": "evil.example:80"}
    assert httpx2.post(url, json=body, headers=rebind).status_code in (400, 403, 421)
    origin = {**headers, "Authorization": f"Bearer {token}", "Origin": "http://evil.example"}
    assert httpx2.post(url, json=body, headers=origin).status_code in (400, 403)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_http_client_with_token(http_server: tuple[str, str], mode: str) -> None:
    url, token = http_server

    async def main() -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "search" in names
            result = await client.call_tool("search", {"query": "rollback", "k": 1})
            assert not result.is_error and result.structured_content

    anyio.run(main)


def test_cancelled_ingest_over_stdio_lets_go_of_the_locks(
    indexed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """The real server: an ingest cancelled by the client stops, frees the writer and keyword locks
    for other writers, and the next ingest finishes the folder."""
    data = tmp_path / "data"
    shutil.copytree(indexed[0], data)
    bulk = tmp_path / "bulk"
    bulk.mkdir()
    for i in range(300):
        (bulk / f"n{i:03}.md").write_text(f"# Note {i}\n\nStep {i}: drain the queue, restart the worker.\n")
    cmd = _serve_cmd(data, "--allow-ingest", str(tmp_path))

    async def main() -> None:
        started = anyio.Event()

        async def progress(done: float, total: float | None, message: str | None) -> None:
            started.set()

        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=indexed[1])
        async with Client(params) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    lambda: client.call_tool("ingest", {"path": str(bulk)}, progress_callback=progress)
                )
                with anyio.fail_after(60):
                    await started.wait()
                tg.cancel_scope.cancel()
            with anyio.fail_after(30):
                while not writer_free(data):
                    await anyio.sleep(0.05)
            found = await client.call_tool("search", {"query": "Urlaubstage", "k": 1})
            assert not found.is_error
            done = (await client.call_tool("ingest", {"path": str(bulk)})).structured_content
            assert done and done["added"] + done["unchanged"] == 300 and done["removed"] == 0

    anyio.run(main)
