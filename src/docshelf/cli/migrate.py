"""`docshelf migrate --to postgresql://...`: move an embedded index to a shared PostgreSQL store."""

from __future__ import annotations

from typing import Annotated

import typer

from docshelf.cli.main import ConfigOpt, DataDirOpt, JsonOpt, _handle_errors, _settings
from docshelf.cli.output import err, print_json, progress_bar
from docshelf.errors import ConfigError

__all__ = ["register"]


def migrate(
    to: Annotated[str, typer.Option("--to", help="target DSN, postgresql://user:pass@host/db")],
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Copy the embedded index (documents, chunks, vectors) into PostgreSQL without re-embedding."""
    from docshelf.index.lock import WriterLock
    from docshelf.runtime import Runtime
    from docshelf.store import open_store
    from docshelf.store.copy import copy_store

    if not to.startswith(("postgresql://", "postgres://")):
        raise ConfigError(f"--to must be a postgresql:// DSN, not {to!r}")
    settings = _settings(config, data_dir, None)
    settings.store.url = None  # the source is always the embedded store in data_dir
    source = Runtime(settings)
    try:
        target_settings = settings.model_copy(deep=True)
        target_settings.store.url = to
        target = open_store(target_settings, source.analyzer)
        try:
            with (
                WriterLock(settings.store.data_dir, settings.watch.lock_timeout_s),
                progress_bar(err.is_terminal) as bar,
            ):
                task = bar.add_task("copy", total=None)
                report = copy_store(
                    source.store, target, lambda done, total: bar.update(task, completed=done, total=total)
                )
        finally:
            target.close()
    finally:
        source.close()
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
    app.command()(_handle_errors(migrate))
