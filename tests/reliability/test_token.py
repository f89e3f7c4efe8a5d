"""The HTTP server's bearer token: written whole or not at all, and never empty or short.

An empty ``server-token`` file (what a full disk at first start left behind) made the expected
token "", so ``Authorization: Bearer`` with no value was let in.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from crashkit import cli_env

from docshelf.config import Settings, load_settings
from docshelf.errors import DocshelfError
from docshelf.server.http import TOKEN_FILE, load_or_create_token


def _settings(tmp_path: Path) -> Settings:
    settings = load_settings()
    settings.store.data_dir = tmp_path / "data"
    return settings


@pytest.mark.parametrize("content", ["", "\n", "   \n", "short\n"])
def test_an_empty_or_short_token_file_is_refused(tmp_path: Path, content: str) -> None:
    settings = _settings(tmp_path)
    settings.store.data_dir.mkdir()
    (settings.store.data_dir / TOKEN_FILE).write_text(content)
    with pytest.raises(DocshelfError, match=TOKEN_FILE) as caught:
        load_or_create_token(settings)
    assert "delete it" in str(caught.value)


def test_a_short_configured_token_is_refused(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    settings.server.token = "abc"
    with pytest.raises(DocshelfError, match=r"server\.token"):
        load_or_create_token(settings)


def test_a_failed_write_leaves_no_token_file_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _settings(tmp_path)
    real_write = os.write

    def full_disk(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises((DocshelfError, OSError)):
        load_or_create_token(settings)
    monkeypatch.setattr(os, "write", real_write)
    assert not (settings.store.data_dir / TOKEN_FILE).exists()
    assert [p.name for p in settings.store.data_dir.iterdir()] == []  # no temporary file either
    token, path, created = load_or_create_token(settings)
    assert created and path is not None and len(token) >= 32
    assert path.read_text().strip() == token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_token(settings) == (token, path, False)


def test_serve_refuses_to_start_with_an_empty_token_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    samples = Path(__file__).resolve().parents[2] / "samples" / "corpus"
    indexed = subprocess.run(
        [sys.executable, "-m", "docshelf", "index", str(samples), "--data-dir", str(data)],
        env=cli_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert indexed.returncode == 0, indexed.stderr
    (data / TOKEN_FILE).write_text("")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "docshelf", "serve", "--http", "--port", str(port), "--data-dir", str(data)],
        env=cli_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _, stderr = proc.communicate(timeout=60)  # a server that starts would run until killed
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the server started with an empty token")
    assert proc.returncode != 0 and "Traceback" not in stderr
    assert TOKEN_FILE in stderr and "error:" in stderr
