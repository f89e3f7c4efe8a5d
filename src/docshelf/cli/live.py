"""`docshelf watch` (live indexing) and `docshelf compact` (VACUUM + keyword index clean-up)."""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from docshelf.cli.main import CollectionOpt, ConfigOpt, DataDirOpt, JsonOpt, _handle_errors, _settings
from docshelf.cli.output import err, print_json

if TYPE_CHECKING:
    from docshelf.index.sync import SyncReport

__all__ = ["register"]


def _summary(report: SyncReport) -> str:
    return (
        f"{report.collection}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.removed)} removed, {len(report.skipped)} skipped in {report.seconds:.2f}s"
    )


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def watch(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="folders to add and watch; none = the collection's folders")
    ] = None,
    collection: CollectionOpt = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
) -> None:
    """Index, then keep the index up to date as files change (Ctrl-C to stop)."""
    from docshelf.index.watch import Watcher
    from docshelf.runtime import Runtime

    settings = _settings(config, data_dir, collection, paths[0] if paths else None)
    runtime = Runtime(settings)
    try:
        indexer = runtime.indexer()
        # the first sync runs here, so a bad folder or a busy index is reported before watching
        report = indexer.sync(settings.collection, paths or [])
        err.print(_summary(report), highlight=False)
        watcher = Watcher(
            indexer, settings.collection, settings.watch, paths or [],
            on_sync=lambda r: err.print(_summary(r), highlight=False),
        )  # fmt: skip
        roots = runtime.store.collection_roots(settings.collection)
        err.print(
            f"watching {', '.join(roots)} (debounce {settings.watch.debounce_ms} ms, "
            f"rescan every {settings.watch.rescan_s:g}s); Ctrl-C to stop",
            highlight=False,
        )
        signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop: finish cleanly
        try:
            watcher.run_forever()
        except KeyboardInterrupt:
            err.print("stopped watching")
    finally:
        runtime.close()


def compact(config: ConfigOpt = None, data_dir: DataDirOpt = None, as_json: JsonOpt = False) -> None:
    """Reclaim space: VACUUM the database, truncate its WAL, clean the keyword index's files."""
    from docshelf.index.lock import WriterLock
    from docshelf.runtime import Runtime

    settings = _settings(config, data_dir, None)
    runtime = Runtime(settings)
    try:
        store = runtime.store
        with WriterLock(store.data_dir, settings.watch.lock_timeout_s):
            before, after = store.compact()
    finally:
        runtime.close()
    if as_json:
        print_json({"size_bytes_before": before, "size_bytes_after": after})
    else:
        err.print(f"compacted {settings.store.data_dir}: {before:,} -> {after:,} bytes", highlight=False)


def register(app: typer.Typer) -> None:
    """Add `watch` and `compact` to the docshelf CLI."""
    app.command()(_handle_errors(watch))
    app.command()(_handle_errors(compact))
