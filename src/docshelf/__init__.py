"""docshelf: local-first hybrid document search for LLM agents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docshelf.errors import (
    AccessError,
    ConfigError,
    DocshelfError,
    EmbedError,
    ModelMismatchError,
    NotFoundError,
    ParseError,
    SourceError,
    StoreError,
)

if TYPE_CHECKING:
    from docshelf.config import Settings, load_settings
    from docshelf.shelf import SearchRequest, Shelf

__version__ = "0.1.0"

__all__ = [
    "AccessError",
    "ConfigError",
    "DocshelfError",
    "EmbedError",
    "ModelMismatchError",
    "NotFoundError",
    "ParseError",
    "SearchRequest",
    "Settings",
    "Shelf",
    "SourceError",
    "StoreError",
    "__version__",
    "load_settings",
]

# pydantic-settings and the shelf load on first use, not on `import docshelf`
_LAZY = {"Settings": "docshelf.config", "load_settings": "docshelf.config", "Shelf": "docshelf.shelf",
         "SearchRequest": "docshelf.shelf"}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
