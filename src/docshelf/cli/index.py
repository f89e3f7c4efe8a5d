"""`docshelf index` and `docshelf forget`."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from docshelf.cli.common import (
    CollectionOpt,
    ConfigOpt,
    DataDirOpt,
    JsonOpt,
    Loaded,
    handle_errors,
    load,
    open_shelf,
    require_index,
)  # fmt: skip
from docshelf.cli.output import data, err, print_json, progress_bar
from docshelf.cli.render import wrapped
from docshelf.cli.report import index_summary
from docshelf.errors import DocshelfError, NotFoundError

__all__ = ["STRICT_EXIT", "register"]

STRICT_EXIT = 9  # index --strict: some files were skipped


@contextmanager
def _no_empty_index(loaded: Loaded) -> Iterator[None]:
    """A failed run that made the data dir leaves none behind if nothing was indexed into it
    (`index FILE` into a fresh dir made an empty index, then said the file is under no root).
    An interrupt keeps it: what was indexed so far is kept."""
    store = loaded.settings.store
    fresh = store.url is None and not store.data_dir.exists()
    try:
        yield
    except (DocshelfError, OSError, sqlite3.Error):
        if fresh and store.data_dir.is_dir() and _holds_nothing(loaded):
            shutil.rmtree(store.data_dir, ignore_errors=True)
        raise


def _holds_nothing(loaded: Loaded) -> bool:
    try:
        with open_shelf(loaded) as shelf:
            return not shelf.exists() or shelf.summary().documents == 0
    except (DocshelfError, OSError, sqlite3.Error):
        return False  # unreadable: not ours to judge, so not ours to delete


def index(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="folders, files in indexed folders, or URLs (web pages, public Google Drive links) to "
            "index; none = re-sync known folders and re-fetch known URLs"
        ),
    ] = None,
    collection: CollectionOpt = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="docshelf.toml to read; for a collection indexed before, its sources/chunk/"
            "parse/analyze settings replace the recorded ones (what changed is re-indexed)",
        ),
    ] = None,
    data_dir: DataDirOpt = None,
    reembed: Annotated[
        bool, typer.Option("--reembed", help="re-embed everything with the configured model")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help=f"exit {STRICT_EXIT} if any file was skipped")
    ] = False,
    skipped: Annotated[
        bool, typer.Option("--skipped", help="list every skipped file with its reason, not only the counts")
    ] = False,
    keyword_only: Annotated[
        bool,
        typer.Option(
            "--keyword-only",
            help="stop once every file is keyword-searchable; a later `docshelf index` computes the vectors",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Index folders: the first run indexes everything, later runs only what changed.

    Every new or changed file is searchable by keyword as soon as it is read; the vectors for
    semantic search are computed after (an interrupted run leaves them to the next)."""
    from docshelf.shelf import is_url

    folders = [Path(p) for p in paths or [] if not is_url(p)]
    loaded = load(config, data_dir, collection, folders[0] if folders else None)
    with _no_empty_index(loaded), open_shelf(loaded) as shelf:
        if reembed:
            with progress_bar(not as_json) as bar:
                bar.add_task("re-embedding", total=None)
                count = shelf.reembed()
            err.print(data(f"re-embedded {count} chunks with {shelf.model_name}"))
        from docshelf.cli.progress import IndexProgress  # rich.progress: ~0.1 s to import

        with IndexProgress(not as_json and sys.stderr.isatty()) as progress:
            done = shelf.index(
                paths or [], collection, reconfigure=loaded.explicit, progress=progress,
                keyword_only=keyword_only,
            )  # fmt: skip
    report = done.sync
    if as_json:
        print_json(done.as_dict())
    else:
        for change in done.settings_changes:
            err.print(data(f"  settings changed: {change}"))
        for note in done.notes:
            err.print(data(f"note: {note}"))
        for line in index_summary(done, skipped):
            # a listed file's reason wraps under its text, past the file names (as in status)
            err.print(wrapped(line, err, first=0, rest=6 if line.plain.startswith("    ") else 4))
    if strict and report.skipped:
        raise typer.Exit(STRICT_EXIT)


def forget(
    path: Annotated[
        str,
        typer.Argument(
            help="a document path (relative or absolute), a whole root folder, or a URL given to "
            "`index` (its whole mirror) or of one fetched page or Drive file"
        ),
    ],
    collection: CollectionOpt = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
) -> None:
    """Remove a document (or a root folder and all its documents) from the index."""
    from docshelf.shelf import is_url

    loaded = load(config, data_dir, collection)
    where = f"collection {collection!r}" if collection else "any collection"
    with open_shelf(loaded) as shelf:
        require_index(shelf, loaded)
        try:
            done = shelf.forget(path, collection)
        except NotFoundError:
            if is_url(path):
                raise
            raise NotFoundError(f"{path} is not in {where}; see `docshelf status`") from None
    if not done.removed and done.root is None:
        raise NotFoundError(f"{path} is not in {where}; see `docshelf status`")
    count = f"{len(done.removed)} document{'' if len(done.removed) == 1 else 's'}"
    if done.root is not None and not is_url(path):  # the folder leaves the collection's roots too
        said = f"removed {count} and the folder {done.root} from collection {done.collection!r}"
    elif done.root is not None:
        said = f"removed {count} of {path} from collection {done.collection!r}"
    else:
        said = f"removed {count} from collection {done.collection!r}: {', '.join(done.removed)}"
    err.print(data(said))


def register(app: typer.Typer) -> None:
    """Add `index` and `forget` to the docshelf CLI."""
    app.command()(handle_errors(index))
    app.command()(handle_errors(forget))
