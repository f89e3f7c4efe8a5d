"""The HTTP bearer token: the configured one, or one kept in the data dir (``server-token``).

The file is written whole or not at all (a temporary file, then a link to the name, which also
keeps two servers starting at once from overwriting each other), readable by its owner only; a
token that is empty or short (a file truncated by a full disk) is refused, never served with.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.errors import ConfigError

if TYPE_CHECKING:
    from docshelf.config import Settings

__all__ = ["MIN_TOKEN_CHARS", "TOKEN_FILE", "load_or_create_token"]

TOKEN_FILE = "server-token"
MIN_TOKEN_CHARS = 16


def load_or_create_token(settings: Settings) -> tuple[str, Path | None, bool]:
    """(token, file it lives in, whether it was just created). A configured token wins."""
    if settings.server.token is not None:
        token = settings.server.token.strip()
        if len(token) < MIN_TOKEN_CHARS:
            raise ConfigError(
                f"server.token has {len(token)} characters; use at least {MIN_TOKEN_CHARS} (a random "
                "one, e.g. from `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
            )
        return token, None, False
    path = settings.store.data_dir / TOKEN_FILE
    if path.is_file():
        return _read(path), path, False
    try:
        return _create(path), path, True
    except FileExistsError:  # another server made it first: use that one
        return _read(path), path, False
    except OSError as exc:
        raise ConfigError(
            f"cannot write the HTTP token file {path} ({exc.strerror}); free some space or fix the "
            "folder's permissions, or set server.token (DOCSHELF_SERVER__TOKEN)"
        ) from exc


def _read(path: Path) -> str:
    token = path.read_text("utf-8").strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"the HTTP token file {path} is {'empty' if not token else 'too short'} (damaged, perhaps by "
            "a full disk); delete it and start the server again for a new token, or set server.token"
        )
    return token


def _create(path: Path) -> str:
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    # 0600 from the start (mkstemp): the token must never be readable by other users, not even briefly
    fd, tmp = tempfile.mkstemp(prefix=f".{TOKEN_FILE}-", dir=path.parent)
    try:
        data = (token + "\n").encode()
        with contextlib.closing(os.fdopen(fd, "wb", buffering=0)) as fh:
            while data:
                data = data[os.write(fh.fileno(), data) :]
            os.fsync(fh.fileno())
        os.link(tmp, path)  # FileExistsError if another server got there first; never half a file
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return token
