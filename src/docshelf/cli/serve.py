"""`docshelf serve` (MCP over stdio or HTTP) and `docshelf install CLIENT`."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from docshelf.cli.common import ConfigOpt, DataDirOpt, handle_errors, load
from docshelf.cli.output import data, err
from docshelf.errors import ConfigError

if TYPE_CHECKING:
    pass

__all__ = ["register"]


def serve(
    http: Annotated[bool, typer.Option("--http", help="streamable HTTP instead of stdio")] = False,
    host: Annotated[
        str | None, typer.Option(metavar="HOST", help="HTTP bind address (default 127.0.0.1)")
    ] = None,
    port: Annotated[int | None, typer.Option(metavar="PORT", help="HTTP port (default 8765)")] = None,
    read_only: Annotated[bool, typer.Option("--read-only", help="no ingest/forget/reindex tools")] = False,
    watch: Annotated[
        bool, typer.Option("--watch", help="also re-index every collection as its files change")
    ] = False,
    allow_ingest: Annotated[
        list[Path] | None,
        typer.Option(
            "--allow-ingest",
            metavar="DIR",
            help="a folder the ingest tool may index (repeat; default: indexed roots)",
        ),
    ] = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
) -> None:
    """Serve the index over MCP: stdio for Claude Code/Desktop, Cursor, Codex; or HTTP with a token."""
    from docshelf.server import build_server
    from docshelf.shelf import Shelf

    # handler threads take the interpreter back sooner from an indexing thread (default 5 ms):
    # a search passes it back and forth a few dozen times
    sys.setswitchinterval(0.001)
    loaded = load(config, data_dir, None)
    settings = loaded.settings
    cfg = settings.server
    cfg.read_only = cfg.read_only or read_only
    # no write tools and no watcher: nothing writes, so the index is opened read-only too
    settings.store.read_only = settings.store.read_only or (cfg.read_only and not watch)
    cfg.host = host or cfg.host
    cfg.port = port or cfg.port
    cfg.allow_ingest = [*cfg.allow_ingest, *(p.expanduser().absolute() for p in allow_ingest or ())]
    server, shelf = build_server(settings, Shelf(settings, config_path=loaded.path))
    stop_watch = shelf.watch_all(lambda line: err.print(data(line))) if watch else None
    try:
        if not http:
            server.run("stdio")
            return
        from docshelf.server import load_or_create_token, serve_http  # uvicorn: only for HTTP

        token, path, created = load_or_create_token(settings)
        if created:
            err.print(data(f"new bearer token (saved in {path}): {token}"))
        elif path is not None:
            err.print(data(f"bearer token: see {path}"))
        base = f"http://{cfg.host}:{cfg.port}"
        err.print(data(f"docshelf MCP on {base}/mcp; the web page on {base}/ (log in with the token)"))
        try:
            anyio.run(serve_http, server, settings, token, shelf)
        except SystemExit as exc:  # uvicorn exits 3 when it cannot bind: that code means a source here
            raise ConfigError(
                f"the HTTP server could not listen on {cfg.host}:{cfg.port} (exit {exc.code}; the line "
                "above says why: a port in use, or one this user may not open); pick another with --port"
            ) from None
    except KeyboardInterrupt:
        pass
    finally:
        if stop_watch is not None:
            stop_watch()
        shelf.close()


def install(
    client: Annotated[
        str, typer.Argument(metavar="CLIENT", help="claude-code | claude-desktop | cursor | codex")
    ],
    print_only: Annotated[
        bool, typer.Option("--print", help="only print what would be run or written")
    ] = False,
    file: Annotated[
        Path | None,
        typer.Option("--file", metavar="FILE", help="config file to merge into (default: the client's)"),
    ] = None,
    read_only: Annotated[bool, typer.Option("--read-only", help="install the read-only server")] = False,
    allow_ingest: Annotated[
        list[Path] | None,
        typer.Option(
            "--allow-ingest", metavar="DIR", help="a folder the server's ingest tool may index (repeat)"
        ),
    ] = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
) -> None:
    """Register the docshelf MCP server with a client, using absolute paths; old configs are backed up."""
    from docshelf.server import apply_plan, plan_install, server_command
    from docshelf.shelf import Shelf

    loaded = load(config, data_dir, None)
    settings = loaded.settings
    if not Shelf(settings).exists():
        err.print(
            data(f"note: no index at {settings.store.data_dir} yet; run `docshelf index PATH` before use")
        )
    # a docshelf.toml found here is what these settings came from: the client starts the server
    # from another folder, so it is named (its server.read_only = true was silently lost)
    cmd = server_command(settings.store.data_dir, config or loaded.path, read_only, allow_ingest or ())
    plan = plan_install(client, cmd, file)
    if plan.commands:
        shown = "\n".join(shlex.join(c) for c in plan.commands)
        if print_only or shutil.which("claude") is None:
            typer.echo(shown)
            if not print_only:
                err.print("`claude` is not on PATH: run the commands above yourself")
            return
        *before, add = plan.commands
        for command in before:  # removing an older entry of ours may fail (there is none): fine
            subprocess.call(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        raise typer.Exit(subprocess.call(add))
    assert plan.path is not None and plan.text is not None
    if print_only:
        err.print(data(f"# would write {plan.path}"))
        typer.echo(plan.text, nl=False)
        return
    if plan.unchanged:
        err.print(data(f"{plan.path} registers this docshelf server already; nothing to write"))
        return
    backup = apply_plan(plan)
    if plan.note:
        err.print(data(f"note: {plan.note}"))
    saved = f" (old file kept as {backup})" if backup else ""
    err.print(data(f"wrote {plan.path}{saved}; restart {client} to load docshelf"))


def register(app: typer.Typer) -> None:
    """Add `serve` and `install` to the docshelf CLI."""
    app.command()(handle_errors(serve))
    app.command()(handle_errors(install))
