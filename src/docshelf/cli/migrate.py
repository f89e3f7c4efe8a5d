"""`docshelf migrate --to postgresql://...`: move an index to a (shared) PostgreSQL store."""

from __future__ import annotations

from typing import Annotated

import typer

from docshelf.cli.common import ConfigOpt, DataDirOpt, JsonOpt, handle_errors, load
from docshelf.cli.output import err, print_json, progress_bar
from docshelf.errors import ConfigError

__all__ = ["register"]


def migrate(
    to: Annotated[
        str, typer.Option("--to", metavar="DSN", help="target DSN, postgresql://user:pass@host/db")
    ],
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Copy the index (documents, chunks, vectors) into PostgreSQL without re-embedding.

    The embedded index, or the PostgreSQL store in use (DOCSHELF_STORE), is copied into another.
    """
    from docshelf.cli.common import open_shelf, require_index
    from docshelf.config import same_database

    if not to.startswith(("postgresql://", "postgres://")):
        raise ConfigError(f"--to must be a postgresql:// DSN, not {to!r}")
    loaded = load(config, data_dir, None)
    # The index in use is the source: the PostgreSQL store DOCSHELF_STORE (store.url) names, or
    # the embedded one in data_dir when none is set or it names the target already (set first,
    # then migrate into it)
    source = loaded.settings.store.url
    if source is None or same_database(source, to):
        loaded.settings.store.url = None
        loaded.settings.store.backend = "sqlite"
    with open_shelf(loaded) as shelf, progress_bar(err.is_terminal) as bar:
        require_index(shelf, loaded)
        task = bar.add_task("copy", total=None)
        report = shelf.migrate_to(to, lambda done, total: bar.update(task, completed=done, total=total))
    if as_json:
        print_json(report.__dict__)
        return
    err.print(
        f"copied {report.documents:,} documents ({report.chunks:,} chunks) in {report.collections} "
        f"collection(s); {report.vectors_missing} chunks had no vector. Now set "
        "DOCSHELF_STORE=<the DSN> (or store.url) for every docshelf that should use it.",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add `migrate` to the docshelf CLI."""
    app.command()(handle_errors(migrate))
