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

__version__ = "0.1.0"

__all__ = [
    "AccessError",
    "ConfigError",
    "DocshelfError",
    "EmbedError",
    "ModelMismatchError",
    "NotFoundError",
    "ParseError",
    "Settings",
    "SourceError",
    "StoreError",
    "__version__",
    "load_settings",
]

_LAZY = {"Settings", "load_settings"}  # pydantic-settings loads on first use, not on `import docshelf`


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from docshelf import config

        value = getattr(config, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY)
