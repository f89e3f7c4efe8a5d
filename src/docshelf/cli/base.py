"""What the commands share that needs no command-line framework: the options given before the
command, settings loading, opening the shelf, and a failure said in one line with its exit code.

`docshelf search` runs on these alone (cli/direct.py) when typer is not needed to read its
arguments; cli/common.py adds typer's option types and the error wrapper for every command.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.cli.output import err, message
from docshelf.cli.pipe import hang_up, reader_gone
from docshelf.errors import ConfigError, DocshelfError, NotFoundError, SourceError, StoreError

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.shelf import Shelf

__all__ = [
    "Loaded",
    "check_collections",
    "given_before",
    "given_options",
    "load",
    "open_shelf",
    "require_index",
    "said",
]

log = logging.getLogger("docshelf.cli.common")

_INDEXING = frozenset({"index", "watch"})


@dataclass
class _Given:
    """What this run was given before the command (`docshelf --data-dir X status`), and the data
    dir the command settled on (an OSError under it is the index's, elsewhere the corpus's)."""

    config: Path | None = None
    data_dir: Path | None = None
    used_data_dir: Path | None = None


_given = _Given()


def given_options(config: Path | None, data_dir: Path | None) -> tuple[Path | None, Path | None]:
    """A command's --config and --data-dir, else those given before the command."""
    return config or _given.config, data_dir or _given.data_dir


def given_before(config: Path | None, data_dir: Path | None) -> None:
    """Record the options given before the command; a command's own option wins over them."""
    global _given
    _given = _Given(config, data_dir)


def _os_error(exc: OSError) -> tuple[str, int]:
    """One line and an exit code for an OSError no layer turned into a DocshelfError."""
    if exc.errno == errno.ENOSPC:
        return f"{exc}; free some disk space, then retry", StoreError.exit_code
    where = Path(exc.filename) if isinstance(exc.filename, str) else None
    index = _given.used_data_dir
    in_index = where is None or (index is not None and where.is_relative_to(index))
    if exc.errno in (errno.EACCES, errno.EPERM) and not in_index:
        return (f"cannot read {where}: {exc.strerror}; check its permissions (or run docshelf as a user "
                "who may read it)", SourceError.exit_code)  # fmt: skip
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return (f"{exc}; check the permissions of the data dir {index or ''} or point --data-dir "
                "elsewhere", StoreError.exit_code)  # fmt: skip
    return (
        f"{exc}; check free disk space and the permissions of the data dir, then retry",
        StoreError.exit_code,
    )


def said(exc: BaseException, command: str) -> int:
    """Say ``exc`` on stderr in one line, never a traceback (that only with -v, for a bug of
    ours), and return the exit code it ends ``command`` with."""
    if reader_gone(exc):  # `docshelf ls --json | head -1`: no error, as cat or grep
        return hang_up()
    if isinstance(exc, KeyboardInterrupt):
        # only the commands that index have anything "so far" (a search or a server does not)
        kept = "; what was indexed so far is kept" if command in _INDEXING else ""
        err.print(f"interrupted{kept}")
        return 130
    if isinstance(exc, DocshelfError):
        line, code = str(exc), exc.exit_code
    elif isinstance(exc, OSError):  # disk full, a read-only data dir, an unreadable file
        line, code = _os_error(exc)
    elif isinstance(exc, sqlite3.Error):  # a damaged database
        line = f"{exc}; check free disk space and permissions of the data dir, then retry"
        code = StoreError.exit_code
    else:  # a bug of ours
        log.debug("unexpected error", exc_info=exc)
        line = (f"unexpected {type(exc).__name__}: {exc}; this is a docshelf bug, please report it "
                "with the output of the same command run with -v")  # fmt: skip
        code = 1
    err.print(message(("error:", "red"), f" {line}"))
    return code


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

    config, data_dir = given_options(config, data_dir)
    path = config or find_config(hint)
    settings = load_settings(path)
    if data_dir is not None:
        settings.store.data_dir = data_dir.expanduser()
    settings.store.read_only = settings.store.read_only or read_only
    if collection:
        settings = settings.model_copy(update={"collection": collection})
    where = settings.store.data_dir
    if settings.store.url is None and where.exists() and not where.is_dir():
        raise ConfigError(
            f"the data dir {where} is a file, not a folder; point --data-dir (or store.data_dir) at a "
            "folder, a new one or one that holds an index"
        )
    _given.used_data_dir = where.absolute()
    return Loaded(settings, path, config is not None)


def require_index(shelf: Shelf, loaded: Loaded) -> None:
    """A command that changes an index never makes an empty one where --data-dir was mistyped."""
    if not shelf.exists():
        raise NotFoundError(
            f"there is no index at {loaded.settings.store.data_dir}; check --data-dir, or run "
            "`docshelf index FOLDER` to build one"
        )


def check_collections(shelf: Shelf, names: Sequence[str]) -> list[str]:
    """A collection asked for that the index does not have: not found, with the ones it has;
    otherwise the collections the index has."""
    known = shelf.collections()
    if missing := [n for n in names if n not in known]:
        have = ", ".join(known) or "none yet (docshelf index FOLDER makes one)"
        raise NotFoundError(f"no collection {', '.join(map(repr, missing))}; the index has {have}")
    return known


def open_shelf(loaded: Loaded) -> Shelf:
    """The shelf for a command; a first-run model preparation it causes is announced on stderr."""
    from docshelf.cli.logs import listen_for_preparation
    from docshelf.shelf import Shelf

    listen_for_preparation()
    return Shelf(loaded.settings, config_path=loaded.path, config_explicit=loaded.explicit)
