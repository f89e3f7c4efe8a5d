"""No network by default: index, search and serve with outbound connections blocked; cloud
embedders fail with a clear message when not configured, never at import time."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

sys.path.insert(0, str(Path(__file__).parent))

from crashkit import cli_env

from docshelf.config import EmbedSettings, load_settings
from docshelf.embed import create_embedder
from docshelf.errors import EmbedError
from docshelf.server import create_server
from docshelf.shelf import Shelf

_LOOPBACK = {"127.0.0.1", "::1", "localhost", "0.0.0.0", "::"}


class NetworkGuard:
    """Blocks every outbound INET connection, datagram and name lookup except loopback."""

    def __init__(self) -> None:
        self.attempts: list[str] = []

    def _check(self, sock: socket.socket, address: Any, what: str) -> None:
        if sock.family == socket.AF_UNIX:
            return
        host = address[0] if isinstance(address, tuple) else str(address)
        if str(host) not in _LOOPBACK and not str(host).startswith("127."):
            self.attempts.append(f"{what} {address!r}")
            raise OSError(f"network blocked by the test: {what} {address!r}")

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
        real_sendto, real_getaddrinfo = socket.socket.sendto, socket.getaddrinfo
        guard = self

        def connect(sock: socket.socket, address: Any) -> None:
            guard._check(sock, address, "connect")
            real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            guard._check(sock, address, "connect_ex")
            return real_connect_ex(sock, address)

        def sendto(sock: socket.socket, data: bytes, *args: Any) -> int:
            guard._check(sock, args[-1], "sendto")
            return real_sendto(sock, data, *args)

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if host is not None and str(host) not in _LOOPBACK:
                guard.attempts.append(f"getaddrinfo {host!r}")
                raise socket.gaierror(f"name lookup blocked by the test: {host!r}")
            return real_getaddrinfo(host, *args, **kwargs)

        monkeypatch.setattr(socket.socket, "connect", connect)
        monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
        monkeypatch.setattr(socket.socket, "sendto", sendto)
        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[NetworkGuard]:
    guard = NetworkGuard()
    guard.install(monkeypatch)
    yield guard
    assert guard.attempts == [], f"docshelf tried to reach the network: {guard.attempts}"


def test_the_guard_blocks_outbound_connections(offline: NetworkGuard) -> None:
    with pytest.raises(OSError, match="blocked"):
        socket.create_connection(("203.0.113.1", 443), timeout=1)  # TEST-NET-3, never routed
    with pytest.raises(OSError, match="blocked"):
        socket.getaddrinfo("example.com", 443)
    assert len(offline.attempts) == 2
    offline.attempts.clear()


@pytest.mark.slow  # the real bundled e5 model (the default settings)
def test_index_search_and_serve_with_default_settings_offline(
    offline: NetworkGuard, corpus: Path, tmp_path: Path
) -> None:
    """The default model (e5, bundled weights) and every other default: no socket leaves the box."""
    settings = load_settings(collection="test")
    settings.store.data_dir = tmp_path / "data"
    assert settings.embed.model == "e5" and settings.embed.endpoint is None
    with Shelf(settings) as shelf:
        report = shelf.index([corpus], "test").sync
        assert report.added and not report.skipped
        hits = shelf.search("How often are the databases backed up?", k=3).hits
        assert "notes/数据备份策略.md" in {h.path for h in hits}

    async def serve() -> dict[str, Any]:
        async with Client(create_server(settings)) as client:
            result = await client.call_tool("search", {"query": "Urlaubstage", "k": 2})
            assert not result.is_error and result.structured_content
            return dict(result.structured_content)

    out = anyio.run(serve)
    assert out["hits"] and out["mode"] == "hybrid" and out["note"] is None  # the model loaded, offline


def test_cloud_embedder_without_endpoint_or_key_is_a_clear_error(
    offline: NetworkGuard, tmp_path: Path
) -> None:
    with pytest.raises(EmbedError, match="needs an endpoint"):
        create_embedder(EmbedSettings.model_validate({"model": "openai:text-embedding-3-small"}), tmp_path)
    with pytest.raises(EmbedError, match="needs an API key"):
        create_embedder(
            EmbedSettings.model_validate(
                {"model": "openai:text-embedding-3-small", "endpoint": "https://api.openai.com/v1"}
            ),
            tmp_path,
        )  # refused before any connection: the guard saw nothing


def test_cloud_settings_fail_at_use_not_at_import(tmp_path: Path) -> None:
    env = cli_env(tmp_path, DOCSHELF_EMBED__MODEL="openai:text-embedding-3-small")
    imports = "import docshelf, docshelf.embed, docshelf.embed.remote, docshelf.cli.main, docshelf.server"
    assert subprocess.run([sys.executable, "-c", imports], env=env, capture_output=True).returncode == 0
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n\ntext\n", "utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "docshelf", "index", str(corpus), "--data-dir", str(tmp_path / "data")],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 4 and "Traceback" not in proc.stderr
    assert proc.stderr.count("error:") == 1 and "needs an endpoint" in proc.stderr
