"""docshelf: local-first hybrid document search for LLM agents."""

from docshelf.config import Settings, load_settings
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
