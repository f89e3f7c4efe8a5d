"""The search helper: a per-user background process that keeps one index open (read-only: it never
writes, so it is never a second writer) and its model loaded, and answers `docshelf search` over a
Unix socket (cli/quick.py) until it has been idle for ``search.helper_idle_s``.

A search that finds no helper runs in its own process as before and then starts one (``start``),
so the next search skips the imports, the index opening and the model load. The helper runs the
very `search` command for each request, with its consoles rendering as the client's would (same
width, terminal or not, colours), so what is printed does not depend on who answered.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from docshelf.cli.common import ConfigOpt, DataDirOpt, load, open_shelf
from docshelf.cli.quick import PROTOCOL, peer_uid, socket_path, start

if TYPE_CHECKING:
    from rich.console import Console

    from docshelf.shelf import Shelf

__all__ = ["register", "start"]

log = logging.getLogger("docshelf.cli.helper")

_MAX_REQUEST = 1 << 20
_READ_S = 10.0
_SEND_S = 30.0
_TICK_S = 1.0


def helper(
    key: Annotated[str, typer.Option("--key")],
    idle: Annotated[float, typer.Option("--idle")] = 600.0,
    warm: Annotated[bool, typer.Option("--warm")] = False,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
) -> None:
    """Answer `docshelf search` for one set of settings until idle (started by a search)."""
    from docshelf.cli.logs import setup_logging

    path = socket_path(key, create=True)
    if path is None:
        return
    server = _bind(path)
    if server is None:  # another helper serves these settings
        return
    mine = path.stat().st_ino
    try:
        setup_logging(False)
        loaded = load(config, data_dir, None, read_only=True)
        index = loaded.settings.store.data_dir.absolute()
        opened = _identity(index)
        with open_shelf(loaded) as shelf:
            if warm:
                shelf.wait_for_model()  # the next hybrid search need not wait (clients queue meanwhile)
            _serve(server, path, mine, shelf, idle, lambda: _identity(index) == opened)
    except Exception:  # a helper that cannot go on leaves the searches to their own processes
        log.debug("search helper stopped", exc_info=True)
    finally:
        server.close()
        with contextlib.suppress(OSError):
            if path.stat().st_ino == mine:
                path.unlink()


def _bind(path: Path) -> socket.socket | None:
    """A listening socket at ``path`` (mode 0600 from the start), None if a live helper has it."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        try:
            server.bind(str(path))
        except OSError:
            if _alive(path):
                server.close()
                return None
            path.unlink(missing_ok=True)  # left by a helper that was killed
            server.bind(str(path))
    except OSError:  # no helper then: every search runs in its own process
        server.close()
        return None
    finally:
        os.umask(old)
    server.listen(16)
    server.settimeout(_TICK_S)
    return server


def _alive(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def _identity(index: Path) -> tuple[int, ...] | None:
    """Which data dir and database file ``index`` is now: another one in its place (deleted and
    indexed again, restored from a backup) is not what the open store reads."""
    try:
        folder = index.stat()
    except OSError:
        return None
    try:
        db = (index / "docshelf.db").stat()
    except OSError:
        return (folder.st_dev, folder.st_ino)
    return (folder.st_dev, folder.st_ino, db.st_dev, db.st_ino)


def _serve(
    server: socket.socket, path: Path, mine: int, shelf: Shelf, idle: float, current: Callable[[], bool]
) -> None:
    last = time.monotonic()
    while time.monotonic() - last < idle:
        try:
            if path.stat().st_ino != mine:  # removed, or taken over: this helper is not asked any more
                return
        except OSError:
            return
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        with conn:
            if peer_uid(conn) != os.getuid():
                continue  # closed unanswered; not a use that keeps the helper alive
            if not current():  # the client searches itself (and starts a helper on the new index)
                _send(conn, {"v": PROTOCOL, "fallback": True})
                return
            _answer(conn, shelf)
        last = time.monotonic()


def _answer(conn: socket.socket, shelf: Shelf) -> None:
    conn.settimeout(_READ_S)
    try:
        chunks, size = [], 0
        while chunk := conn.recv(1 << 16):
            chunks.append(chunk)
            size += len(chunk)
            if size > _MAX_REQUEST:
                return
        request = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return
    _send(conn, _reply(request, shelf))


def _send(conn: socket.socket, reply: dict[str, Any]) -> None:
    # bounded: a client that stops reading may not keep the helper from its idle exit
    with contextlib.suppress(OSError):
        conn.settimeout(_SEND_S)
        conn.sendall(json.dumps(reply, ensure_ascii=False).encode("utf-8", "surrogateescape"))


def _reply(request: Any, shelf: Shelf) -> dict[str, Any]:
    fallback = {"v": PROTOCOL, "fallback": True}
    if not isinstance(request, dict) or request.get("v") != PROTOCOL:
        return fallback
    argv, console = request.get("argv"), request.get("console")
    if (
        not isinstance(argv, list)
        or not all(isinstance(a, str) for a in argv)
        or not isinstance(console, dict)
    ):
        return fallback
    out, err = _Captured(bool(console.get("stdout_tty"))), _Captured(bool(console.get("stderr_tty")))
    code = _run(argv, shelf, _console(out, console), _console(err, console), out)
    if code is None:
        return fallback
    return {"v": PROTOCOL, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


class _Captured(io.StringIO):
    """A console's output for the client, a terminal or not as the client's stream is."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def _console(file: _Captured, client: dict[str, Any]) -> Console:
    """A console that renders as the client's would: its environment decides terminal, colours and
    size (COLUMNS first, then the terminal's own width, else 80), as rich decides them."""
    from rich.console import Console

    env = {str(k): str(v) for k, v in dict(client.get("env") or {}).items()}
    columns = env.get("COLUMNS", "")
    size = client.get("width")
    width = int(columns) if columns.isdigit() else size if isinstance(size, int) and size > 0 else 80
    return Console(
        file=file, _environ=env, width=width, soft_wrap=True, markup=False, emoji=False, highlight=False
    )


@contextlib.contextmanager
def _as(target: Console, stand_in: Console) -> Iterator[None]:
    """``target`` (the CLI's module-level console, which its renderers default to) behaving as
    ``stand_in`` for one request: one request at a time, so swapping its state is safe."""
    saved = dict(target.__dict__)
    target.__dict__.update(stand_in.__dict__)
    try:
        yield
    finally:
        target.__dict__.clear()
        target.__dict__.update(saved)


def _run(argv: list[str], shelf: Shelf, out: Console, err: Console, stdout: io.StringIO) -> int | None:
    """The `search` command's exit code, its output in the stand-in consoles; None when it cannot be
    answered here (a usage error: the client's own process reports it as it always did)."""
    from docshelf.cli import output, search

    command = _search_command()
    shelf.recount_stale()  # as a new process would: stale files counted at this search
    with (
        _as(output.out, out), _as(output.err, err), contextlib.redirect_stdout(stdout),
        search.given_shelf(shelf),
    ):  # fmt: skip
        try:
            result = command.main(args=argv, prog_name="docshelf search", standalone_mode=False)
        except typer.Abort:
            return 130
        except typer.TyperException:  # (typer's own click: usage errors, bad values)
            return None
    return int(result) if isinstance(result, int) else 0


_COMMAND: list[Any] = []


def _search_command() -> Any:
    if not _COMMAND:
        from typer.main import get_command

        from docshelf.cli.main import app

        _COMMAND.append(get_command(app).commands["search"])  # type: ignore[attr-defined]
    return _COMMAND[0]


def register(app: typer.Typer) -> None:
    """Add the hidden `helper` command to the docshelf CLI."""
    app.command(hidden=True)(helper)
