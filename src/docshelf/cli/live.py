"""`docshelf watch` (live indexing) and `docshelf compact` (VACUUM + keyword index clean-up)."""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from docshelf.cli.common import CollectionOpt, ConfigOpt, DataDirOpt, JsonOpt, handle_errors, load
from docshelf.cli.output import data, err, print_json
from docshelf.cli.render import wrapped

if TYPE_CHECKING:
    from docshelf.shelf import SyncReport

__all__ = ["register"]


def _summary(report: SyncReport) -> str:
    return (
        f"{report.collection}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.removed)} removed, {len(report.skipped)} skipped in {report.seconds:.2f}s"
    )


def _say(line: str) -> None:
    err.print(wrapped(data(line), err, first=0, rest=2))


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def watch(
    paths: Annotated[
        list[Path] | None,
        # readable=False: an unreadable folder is a source problem (exit 3), said by the indexer
        typer.Argument(readable=False, help="folders to add and watch; none = the collection's folders"),
    ] = None,
    collection: CollectionOpt = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
) -> None:
    """Index, then keep the index up to date as files change (Ctrl-C to stop)."""
    from docshelf.cli.common import open_shelf

    loaded = load(config, data_dir, collection, paths[0] if paths else None)
    settings = loaded.settings
    with open_shelf(loaded) as shelf:
        # the first sync runs here, so a bad folder or a busy index is reported before watching
        first = shelf.index([str(p) for p in paths or []], collection, reconfigure=loaded.explicit)
        name = first.sync.collection
        _say(_summary(first.sync))
        watcher = shelf.watcher(name, paths or [], on_sync=lambda r: _say(_summary(r)))
        roots = shelf.roots(name)
        _say(f"watching {', '.join(roots)} (debounce {settings.watch.debounce_ms} ms, rescan every "
             f"{settings.watch.rescan_s:g}s); Ctrl-C to stop")  # fmt: skip
        signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop: finish cleanly
        try:
            watcher.run_forever()
        except KeyboardInterrupt:
            err.print("stopped watching")


def compact(config: ConfigOpt = None, data_dir: DataDirOpt = None, as_json: JsonOpt = False) -> None:
    """Reclaim space: VACUUM the database, truncate its WAL, clean the keyword index's files."""
    from docshelf.cli.common import open_shelf, require_index

    loaded = load(config, data_dir, None)
    settings = loaded.settings
    with open_shelf(loaded) as shelf:
        require_index(shelf, loaded)
        before, after = shelf.compact()
    if as_json:
        print_json({"size_bytes_before": before, "size_bytes_after": after})
    else:
        err.print(data(f"compacted {settings.store.data_dir}: {before:,} -> {after:,} bytes"))


def register(app: typer.Typer) -> None:
    """Add `watch` and `compact` to the docshelf CLI."""
    app.command()(handle_errors(watch))
    app.command()(handle_errors(compact))
