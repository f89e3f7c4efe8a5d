"""docshelf: local-first hybrid document search for LLM agents.

    from docshelf import Shelf

    with Shelf() as shelf:
        for hit in shelf.search("how do we page someone for a sev-1").hits:
            print(hit.citation, hit.confidence)

Everything a Python program receives from a ``Shelf`` is exported here; the errors it raises
are ``DocshelfError`` and its children (see ``docshelf.errors``). Names load on first use:
``import docshelf`` loads neither pydantic nor numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docshelf.errors import (
    AccessError,
    ConfigError,
    DeclinedError,
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
    from docshelf.shelf import (
        Answer,
        BuildRecord,
        Check,
        Chunk,
        CollectionStatus,
        Confirm,
        CopyReport,
        DocumentRecord,
        Duplicate,
        EmbedRun,
        EvalRun,
        Evidence,
        ForgetReport,
        GrepCount,
        GrepMatch,
        GrepOutput,
        GrepRequest,
        GrepResult,
        Hit,
        IndexReport,
        Location,
        Mode,
        PageImage,
        Passage,
        PassageWindow,
        Preparation,
        Progress,
        SearchRequest,
        SearchResult,
        Shelf,
        SkippedFile,
        SourcePassage,
        Status,
        Summary,
        SyncReport,
        TextRange,
        Watcher,
    )

__version__ = "0.1.0"

__all__ = [
    "AccessError",
    "Answer",
    "BuildRecord",
    "Check",
    "Chunk",
    "CollectionStatus",
    "ConfigError",
    "Confirm",
    "CopyReport",
    "DeclinedError",
    "DocshelfError",
    "DocumentRecord",
    "Duplicate",
    "EmbedError",
    "EmbedRun",
    "EvalRun",
    "Evidence",
    "ForgetReport",
    "GrepCount",
    "GrepMatch",
    "GrepOutput",
    "GrepRequest",
    "GrepResult",
    "Hit",
    "IndexReport",
    "Location",
    "Mode",
    "ModelMismatchError",
    "NotFoundError",
    "PageImage",
    "ParseError",
    "Passage",
    "PassageWindow",
    "Preparation",
    "Progress",
    "SearchRequest",
    "SearchResult",
    "Settings",
    "Shelf",
    "SkippedFile",
    "SourceError",
    "SourcePassage",
    "Status",
    "StoreError",
    "Summary",
    "SyncReport",
    "TextRange",
    "Watcher",
    "__version__",
    "load_settings",
]

_ERRORS = {
    "AccessError", "ConfigError", "DeclinedError", "DocshelfError", "EmbedError", "ModelMismatchError",
    "NotFoundError", "ParseError", "SourceError", "StoreError",
}  # fmt: skip
# the settings and the shelf load on first use, not on `import docshelf`
_FROM_CONFIG = {"Settings", "load_settings"}
_FROM_SHELF = set(__all__) - _ERRORS - _FROM_CONFIG - {"__version__"}


def __getattr__(name: str) -> Any:
    if name in _FROM_CONFIG or name in _FROM_SHELF:
        import importlib

        module = importlib.import_module("docshelf.config" if name in _FROM_CONFIG else "docshelf.shelf")
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _FROM_CONFIG | _FROM_SHELF)
