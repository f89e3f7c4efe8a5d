"""What every command shares: options, settings loading, the error wrapper, opening the shelf.

The heavy parts (the shelf's store, numpy, tantivy, pydantic settings) are imported inside the
commands that use them, so `docshelf serve` and `--help` start quickly.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import click
import typer
from typer.exceptions import TyperException

from docshelf.cli.output import err, message
from docshelf.errors import DocshelfError, StoreError

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.shelf import Shelf

__all__ = [
    "CollectionOpt",
    "ConfigOpt",
    "DataDirOpt",
    "JsonOpt",
    "Loaded",
    "handle_errors",
    "load",
    "open_shelf",
]

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="docshelf.toml to read")]
DataDirOpt = Annotated[Path | None, typer.Option("--data-dir", help="where the index lives")]
CollectionOpt = Annotated[str | None, typer.Option("--collection", "-c", help="collection name")]
JsonOpt = Annotated[bool, typer.Option("--json", help="machine-readable JSON on stdout")]


_INDEXING = frozenset({"index", "watch"})


def handle_errors(fn: F) -> F:
    """Turn DocshelfError into a one-line message and its exit code, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DocshelfError as exc:
            err.print(message(("error:", "red"), f" {exc}"))
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            # only the commands that index have anything "so far" (a search or a server does not)
            kept = "; what was indexed so far is kept" if fn.__name__ in _INDEXING else ""
            err.print(f"interrupted{kept}")
            raise typer.Exit(130) from None
        except (OSError, sqlite3.Error) as exc:  # disk full, read-only or damaged files: one line
            err.print(
                message(("error:", "red"), f" {exc}; check free disk space and permissions of the data "
                        "dir and the corpus, then retry")
            )  # fmt: skip
            raise typer.Exit(StoreError.exit_code) from None
        except (typer.Exit, typer.Abort, TyperException, click.exceptions.Exit, click.ClickException):
            raise  # usage errors and exits: typer reports them (exit code 2 for a bad option)
        except Exception as exc:  # a bug of ours: one line here, the traceback with -v
            log.debug("unexpected error", exc_info=True)
            err.print(
                message(("error:", "red"), f" unexpected {type(exc).__name__}: {exc}; this is a docshelf "
                        "bug, please report it with the output of the same command run with -v")
            )  # fmt: skip
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


@dataclass(frozen=True)
class Loaded:
    """Settings and the config file they came from (``explicit``: named with --config)."""

    settings: Settings
    path: Path | None
    explicit: bool


def load(
    config: Path | None, data_dir: Path | None, collection: str | None, hint: Path | None = None,
    read_only: bool = False,
) -> Loaded:  # fmt: skip
    """Settings from --config, else a docshelf.toml in ``hint`` (a corpus folder) or the working dir;
    ``read_only`` for commands that only read: the index is opened without writing anything."""
    from docshelf.config import find_config, load_settings

    path = config or find_config(hint)
    settings = load_settings(path)
    if data_dir is not None:
        settings.store.data_dir = data_dir.expanduser()
    settings.store.read_only = settings.store.read_only or read_only
    if collection:
        settings = settings.model_copy(update={"collection": collection})
    return Loaded(settings, path, config is not None)


def open_shelf(loaded: Loaded) -> Shelf:
    """The shelf for a command; a first-run model preparation it causes is announced on stderr."""
    from docshelf.cli.logs import listen_for_preparation
    from docshelf.shelf import Shelf

    listen_for_preparation()
    return Shelf(loaded.settings, config_path=loaded.path, config_explicit=loaded.explicit)
