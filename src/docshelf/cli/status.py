"""`docshelf status`: what is indexed, with which model, how fresh, and what was skipped."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import typer

from docshelf.cli.main import ConfigOpt, DataDirOpt, JsonOpt, _handle_errors, _settings
from docshelf.cli.output import out, print_json

__all__ = ["register"]


def status(config: ConfigOpt = None, data_dir: DataDirOpt = None, as_json: JsonOpt = False) -> None:
    """Documents, chunks, store size, model, last build and corpus git commit."""
    from rich.table import Table

    from docshelf.config import redact_dsn
    from docshelf.index.stale import stale_summary
    from docshelf.index.watch import read_health
    from docshelf.runtime import Runtime

    settings = _settings(config, data_dir, None)
    runtime = Runtime(settings)
    try:
        store = runtime.store
        stats = store.stats()
        build = store.last_build()
        data: dict[str, Any] = {
            "data_dir": str(settings.store.data_dir),
            "store": redact_dsn(settings.store.url) if settings.store.url else "sqlite",
            "model": stats.model,
            "dim": stats.dim,
            "documents": stats.documents,
            "chunks": stats.chunks,
            "vectors": stats.vectors,
            "size_bytes": stats.size_bytes,
            "collections": {
                name: {**counts, "roots": store.collection_roots(name)}
                for name, counts in stats.collections.items()
            },
            "keyword_index_in_sync": stats.keyword_generation == stats.generation,
            "last_build": None
            if build is None
            else {
                "collection": build.collection,
                "finished_at": datetime.fromtimestamp(build.finished_at or build.started_at).isoformat(
                    timespec="seconds"
                ),
                "git_commit": build.git_commit,
                "git_dirty": build.git_dirty,
                "added": build.added,
                "updated": build.updated,
                "removed": build.removed,
                "unchanged": build.unchanged,
                "skipped": build.skipped,
            },
            "skipped": [{"collection": c, "path": s.path, "reason": s.reason} for c, s in store.skipped()],
            **stale_summary(store),
            "watch": read_health(store.get_meta),
        }
    finally:
        runtime.close()
    if as_json:
        print_json(data)
        return
    table = Table(show_header=False, box=None)
    for key in (
        "data_dir", "store", "model", "documents", "chunks", "size_bytes", "keyword_index_in_sync",
        "stale_documents", "index_age",
    ):  # fmt: skip
        table.add_row(key, str(data[key]))
    for name, w in data["watch"].items():
        state = w.get("state")
        if state != "stopped" and w.get("alive") is False:
            state = "dead (its process is gone)"
        when = {k: datetime.fromtimestamp(w[k]).isoformat(timespec="seconds") if w.get(k) else "never"
                for k in ("last_event_at", "last_sync_at", "last_error_at")}  # fmt: skip
        error = f"; last error {when['last_error_at']}: {w['last_error']}" if w.get("last_error") else ""
        table.add_row(
            f"watch {name}",
            f"{state} (pid {w.get('pid')}), last event {when['last_event_at']}, last sync "
            f"{when['last_sync_at']}, {w.get('restarts', 0)} restarts{error}",
        )
    for name, info in data["collections"].items():
        table.add_row(
            f"collection {name}",
            f"{info['documents']} documents, {info['chunks']} chunks; {', '.join(info['roots'])}",
        )
    if data["last_build"]:
        b = data["last_build"]
        commit = (
            f"{b['git_commit'][:12]}{' (dirty)' if b['git_dirty'] else ''}"
            if b["git_commit"]
            else "not a git repo"
        )
        table.add_row("last build", f"{b['finished_at']} ({b['collection']}), corpus commit {commit}")
    out.print(table)
    for s in data["skipped"]:
        out.print(f"  skipped {s['path']}: {s['reason']}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add `status` to the docshelf CLI."""
    app.command()(_handle_errors(status))
