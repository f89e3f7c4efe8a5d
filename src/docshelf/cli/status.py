"""`docshelf status`: what is indexed, with which model, how fresh, and what was skipped."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import typer

from docshelf.cli.common import ConfigOpt, DataDirOpt, JsonOpt, handle_errors, load
from docshelf.cli.output import out, print_json

__all__ = ["register"]


def status(config: ConfigOpt = None, data_dir: DataDirOpt = None, as_json: JsonOpt = False) -> None:
    """Documents, chunks, store size, model, last build and corpus git commit."""
    from rich.table import Table
    from rich.text import Text

    from docshelf.cli.common import open_shelf

    with open_shelf(load(config, data_dir, None)) as shelf:
        data: dict[str, Any] = shelf.status(stale_limit=None).as_dict()
    if as_json:
        print_json(data)
        return
    table = Table(show_header=False, box=None)
    for key in (
        "data_dir", "store", "model", "documents", "chunks", "size_bytes", "keyword_index_in_sync",
        "stale_documents", "index_age",
    ):  # fmt: skip
        table.add_row(key, Text(str(data[key])))
    for name, w in data["watch"].items():
        state = w.get("state")
        if state != "stopped" and w.get("alive") is False:
            state = "dead (its process is gone)"
        when = {k: datetime.fromtimestamp(w[k]).isoformat(timespec="seconds") if w.get(k) else "never"
                for k in ("last_event_at", "last_sync_at", "last_error_at")}  # fmt: skip
        error = f"; last error {when['last_error_at']}: {w['last_error']}" if w.get("last_error") else ""
        table.add_row(
            Text(f"watch {name}"),
            Text(
                f"{state} (pid {w.get('pid')}), last event {when['last_event_at']}, last sync "
                f"{when['last_sync_at']}, {w.get('restarts', 0)} restarts{error}"
            ),
        )
    for info in data["collections"]:
        table.add_row(
            f"collection {info['name']}",
            Text(f"{info['documents']} documents, {info['chunks']} chunks; {', '.join(info['roots'])}"),
        )
        if info["settings_origin"]:
            table.add_row("", Text(f"settings from {info['settings_origin']}"))
    if data["last_build"]:
        b = data["last_build"]
        commit = (
            f"{b['git_commit'][:12]}{' (dirty)' if b['git_dirty'] else ''}"
            if b["git_commit"]
            else "not a git repo"
        )
        table.add_row("last build", Text(f"{b['finished_at']} ({b['collection']}), corpus commit {commit}"))
    out.print(table)
    for s in data["skipped"]:
        out.print(f"  skipped {s['path']}: {s['reason']}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    """Add `status` to the docshelf CLI."""
    app.command()(handle_errors(status))
