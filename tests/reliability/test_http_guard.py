"""HTTP front door: half-open connections are closed, Host and Origin are parsed, not prefixed.

Reported: 300 connections that never finished their headers stayed open past 25 s;
``Host: 127.0.0.1:port@evil.com`` and ``Origin: http://localhost:1@evil.com`` passed the
DNS-rebinding check (a prefix match), and ``Host: LOCALHOST:port`` was refused.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from crashkit import cli_env

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "corpus"
_CLIENT = {"name": "t", "version": "1"}
_INIT = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": _CLIENT},
})  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    """(port, token) of `docshelf serve --http` with a 1 s header timeout."""
    work = tmp_path_factory.mktemp("http")
    data = work / "data"
    env = cli_env(work, DOCSHELF_SERVER__HEADER_TIMEOUT_S="1")
    subprocess.run([sys.executable, "-m", "docshelf", "index", str(SAMPLES), "--data-dir", str(data)],
                   env=env, check=True, capture_output=True, timeout=120)  # fmt: skip
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "docshelf", "serve", "--http", "--port", str(port), "--data-dir", str(data)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield port, (data / "server-token").read_text().strip()
    finally:
        proc.kill()
        proc.wait()


def _post(port: int, token: str, host: str, origin: str | None = None) -> int:
    """The status line's code for an MCP initialize POST with these Host/Origin headers."""
    headers = [
        "POST /mcp HTTP/1.1", f"Host: {host}", f"Authorization: Bearer {token}",
        "Content-Type: application/json", "Accept: application/json, text/event-stream",
        f"Content-Length: {len(_INIT)}", "Connection: close",
    ]  # fmt: skip
    if origin is not None:
        headers.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(("\r\n".join(headers) + "\r\n\r\n" + _INIT).encode())
        status = sock.recv(64).split(b" ", 2)
    return int(status[1])


def test_host_and_origin_with_userinfo_are_refused(server: tuple[int, str]) -> None:
    port, token = server
    assert _post(port, token, f"127.0.0.1:{port}") == 200
    assert _post(port, token, f"127.0.0.1:{port}@evil.com") == 421
    assert _post(port, token, f"localhost:{port}/x") == 421
    assert _post(port, token, f"127.0.0.1:{port}", "http://localhost:1@evil.com") == 403
    assert _post(port, token, f"127.0.0.1:{port}", f"http://localhost:{port}") == 200


def test_host_names_are_case_insensitive(server: tuple[int, str]) -> None:
    port, token = server
    assert _post(port, token, f"LOCALHOST:{port}") == 200
    assert _post(port, token, f"127.0.0.1:{port}", f"HTTP://LocalHost:{port}") == 200


def test_connections_that_never_finish_their_headers_are_closed(server: tuple[int, str]) -> None:
    port, _ = server
    socks = [socket.create_connection(("127.0.0.1", port), timeout=15) for _ in range(50)]
    try:
        for sock in socks:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and nothing more
        for sock in socks:
            try:
                while sock.recv(1024):  # read to the end: closed, perhaps after a 408
                    pass
            except TimeoutError:
                pytest.fail("a half-open connection was still open 15 s later (header timeout: 1 s)")
    finally:
        for sock in socks:
            sock.close()
