"""`docshelf ls`: the documents of a collection, one line each (path, type, size, when indexed,
title), or as JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.cells import cell_len, set_cell_size

from docshelf.cli.common import (
    ConfigOpt,
    DataDirOpt,
    JsonOpt,
    check_collections,
    handle_errors,
    load,
    open_shelf,
)
from docshelf.cli.output import data, err, out, print_json
from docshelf.cli.status import ago, columns, size

if TYPE_CHECKING:
    from docshelf.shelf import DocumentRecord

__all__ = ["register"]

_WILD = frozenset("*?[")
_MIN_TITLE = 8  # narrower than this, a title says nothing: the line goes without it


def _row(doc: DocumentRecord) -> dict[str, Any]:
    from docshelf.shelf import document_uri, iso

    return {
        "doc_id": doc.id, "collection": doc.collection, "path": doc.path, "uri": document_uri(doc),
        "title": doc.title, "file_type": doc.file_type, "size": doc.size,
        "modified": iso(doc.mtime_ns / 1e9), "indexed_at": iso(doc.indexed_at or None),
        "tags": list(doc.tags), "lifecycle": doc.lifecycle,
    }  # fmt: skip


def _print(docs: list[DocumentRecord]) -> None:
    several = len({d.collection for d in docs}) > 1
    header = [*(["collection"] if several else []), "path", "type", "size", "indexed"]
    rows = [
        [*([d.collection] if several else []), d.path, d.file_type, size(d.size), ago(d.indexed_at or None)]
        for d in docs
    ]
    lines = columns(header, rows, right=(len(header) - 2,))
    titles = ["title", *(d.title or "" for d in docs)]
    for i, (line, title) in enumerate(zip(lines, titles, strict=True)):
        room = out.width - cell_len(line.plain) - 2
        if title and room >= _MIN_TITLE:  # the path is never cut, a long title is
            shown = title if cell_len(title) <= room else set_cell_size(title, room - 1).rstrip() + "…"
            line.append_text(data("  " + shown, "dim" if i else "bold"))
        out.print(line)


def ls(
    path_glob: Annotated[
        str | None,
        typer.Argument(
            metavar="PATH_GLOB",
            help="only these paths: a glob (* spans /, quote it) or a folder of the collection",
        ),
    ] = None,
    collection: Annotated[
        str | None, typer.Option("--collection", "-c", metavar="NAME", help="this collection only")
    ] = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the indexed documents: path, type, size, when indexed, title."""
    folder = path_glob.rstrip("/") if path_glob and not _WILD & set(path_glob) else None
    with open_shelf(load(config, data_dir, None, read_only=True)) as shelf:
        if collection:
            check_collections(shelf, [collection])
        docs = shelf.list_documents(collection, None if folder is not None else path_glob)
    if folder is not None:  # a plain path: that document, or the folder's documents
        docs = [d for d in docs if d.path == folder or d.path.startswith(folder + "/")]
    docs.sort(key=lambda d: (d.collection, d.path))
    if as_json:
        print_json({"documents": [_row(d) for d in docs], "total": len(docs)})
        return
    if not docs:
        where = f"collection {collection!r}" if collection else "the index"
        what = f"matches {path_glob!r} in {where}" if path_glob else f"is in {where}"
        err.print(data(f"no document {what}; `docshelf status` shows the collections"))
        raise typer.Exit(1)
    _print(docs)


def register(app: typer.Typer) -> None:
    """Add `ls` to the docshelf CLI."""
    app.command(name="ls")(handle_errors(ls))
