"""`docshelf ui`: the web page on a free loopback port, opened in the browser."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Annotated

import anyio
import typer

from docshelf.cli.common import ConfigOpt, DataDirOpt, handle_errors, load
from docshelf.cli.output import data, err

__all__ = ["register"]


def _has_display() -> bool:
    """Whether a browser would open in a window: without one, Python's webbrowser falls back to
    a text browser that takes over this terminal."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def ui(
    port: Annotated[
        int, typer.Option(metavar="PORT", help="port on 127.0.0.1 (default: a free one)", show_default=False)
    ] = 0,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="print the login URL instead of opening a browser")
    ] = False,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="no index, reindex or forget buttons")
    ] = False,
    allow_ingest: Annotated[
        list[Path] | None,
        typer.Option(
            "--allow-ingest",
            metavar="DIR",
            help="a folder the page may index (repeat; default: indexed roots)",
        ),
    ] = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
) -> None:
    """Search, read and look after the index in a web page on this machine (loopback only).

    The first line of output is the page's URL with a one-time login token.
    """
    from docshelf.server import load_or_create_token, serve_page
    from docshelf.shelf import Shelf

    sys.setswitchinterval(0.001)  # as `serve`: searches take the interpreter back from an indexing thread
    if not 0 <= port <= 65535:
        raise typer.BadParameter(f"{port} is not a port (0-65535)", param_hint="--port")
    loaded = load(config, data_dir, None)
    settings = loaded.settings
    cfg = settings.server
    cfg.read_only = cfg.read_only or read_only
    settings.store.read_only = settings.store.read_only or cfg.read_only
    cfg.allow_ingest = [*cfg.allow_ingest, *(p.expanduser().absolute() for p in allow_ingest or ())]
    token = load_or_create_token(settings)[0]
    shelf = Shelf(settings, config_path=loaded.path)
    if shelf.exists():
        shelf.start()  # the index opens and the model loads while the browser starts

    def listening(url: str) -> None:
        typer.echo(url)  # first line of stdout: scripts and tests read it
        sys.stdout.flush()
        if no_browser:
            err.print(data("open the URL above in a browser (the login link works once); Ctrl-C stops"))
        elif not _has_display():
            err.print(data("no display to open a browser on: open the URL above in one; Ctrl-C stops"))
        else:
            import webbrowser

            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
            err.print(data("opened the page in your browser; Ctrl-C stops"))

    try:
        anyio.run(serve_page, shelf, settings, token, port, listening)
    except KeyboardInterrupt:
        pass
    finally:
        shelf.close()


def register(app: typer.Typer) -> None:
    """Add `ui` to the docshelf CLI."""
    app.command()(handle_errors(ui))
