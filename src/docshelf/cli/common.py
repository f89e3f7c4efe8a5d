"""What every command shares: typer's options, the error wrapper, and (from cli/base.py) settings
loading and opening the shelf.

The heavy parts (the shelf's store, numpy, tantivy, the settings) are imported inside the
commands that use them, so `docshelf serve` and `--help` start quickly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from docshelf.cli.base import (
    Loaded,
    check_collections,
    given_before,
    given_options,
    load,
    open_shelf,
    require_index,
    said,
)

__all__ = [
    "CollectionOpt",
    "ConfigOpt",
    "DataDirOpt",
    "JsonOpt",
    "Loaded",
    "check_collections",
    "given_before",
    "given_options",
    "handle_errors",
    "load",
    "open_shelf",
    "require_index",
]

F = TypeVar("F", bound=Callable[..., Any])

ConfigOpt = Annotated[Path | None, typer.Option("--config", metavar="FILE", help="docshelf.toml to read")]
# readable=False: an index this user may not read is a store problem (exit 5, said by the store),
# not a usage error
DataDirOpt = Annotated[
    Path | None, typer.Option("--data-dir", metavar="DIR", readable=False, help="where the index lives")
]
CollectionOpt = Annotated[
    str | None, typer.Option("--collection", "-c", metavar="NAME", help="collection name")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="machine-readable JSON on stdout")]
# the filters every command that searches takes, spelled and explained the same everywhere
CollectionsOpt = Annotated[
    list[str] | None, typer.Option("--collection", "-c", metavar="NAME", help="these collections only")
]
PathGlobOpt = Annotated[str | None, typer.Option("--path", metavar="GLOB", help="glob on the document path")]
TagsOpt = Annotated[list[str] | None, typer.Option("--tag", metavar="TAG", help="any of these tags")]
FileTypesOpt = Annotated[
    list[str] | None, typer.Option("--type", metavar="TYPE", help="file type, e.g. markdown or pdf")
]


def handle_errors(fn: F) -> F:
    """Turn a failure into one line on stderr and its exit code (base.said), never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise  # usage errors and exits: the root says them in one line (exit code 2)
        except (Exception, KeyboardInterrupt) as exc:
            raise typer.Exit(said(exc, fn.__name__)) from None

    return wrapper  # type: ignore[return-value]
