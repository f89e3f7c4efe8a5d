"""The exceptions docshelf raises; every message says what happened and what to do."""

from __future__ import annotations

__all__ = [
    "AccessError",
    "ConfigError",
    "DocshelfError",
    "EmbedError",
    "ModelMismatchError",
    "NotFoundError",
    "ParseError",
    "SourceError",
    "StoreError",
]


class DocshelfError(Exception):
    """Base of every error docshelf raises on purpose."""

    exit_code = 1


class ConfigError(DocshelfError):
    """A setting, a config file or an argument is invalid."""

    exit_code = 2


class SourceError(DocshelfError):
    """A corpus root or source cannot be read (missing root, bad URL)."""

    exit_code = 3


class ParseError(DocshelfError):
    """One file could not be parsed; the batch goes on without it."""


class EmbedError(DocshelfError):
    """The embedding model failed or is not available."""

    exit_code = 4


class StoreError(DocshelfError):
    """The index store is unreadable, locked or inconsistent."""

    exit_code = 5


class ModelMismatchError(StoreError):
    """The store was built with another embedding model than the one configured."""

    exit_code = 6


class NotFoundError(DocshelfError):
    """A document, chunk or collection asked for does not exist."""

    exit_code = 7


class AccessError(DocshelfError):
    """A path lies outside the corpus roots."""

    exit_code = 8


class DeclinedError(DocshelfError):
    """The user was asked to confirm a removal and declined it: nothing changed."""
