"""The use-case layer and its vocabulary: one Shelf that the CLI, the MCP server, the web page and
Python programs call, and every type they receive from it.

    from docshelf import Shelf

    with Shelf() as shelf:
        shelf.index(["~/notes"])
        hit = shelf.search("how do we page someone").hits[0]
        print(hit.citation, shelf.read_passage(hit.chunk_id, after=1).passages[0].chunk.text)

The front doors import this package (and ``docshelf``, ``docshelf.config``, ``docshelf.errors``),
never a stage below it. Importing it loads no numpy, tantivy or onnxruntime: the types defined in
the stages (``Hit``, ``DocumentRecord``, ...) load on first use, and the index when it opens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docshelf.shelf.budget import estimate_tokens, prefix_within
from docshelf.shelf.core import Shelf
from docshelf.shelf.locations import Location, parse_location
from docshelf.shelf.pages import PageImage
from docshelf.shelf.reading import SCHEME, document_uri, uri_for
from docshelf.shelf.searching import join_notes
from docshelf.shelf.types import (
    MAX_GREP,
    MAX_K,
    CollectionStatus,
    ForgetReport,
    GrepCount,
    GrepMatch,
    GrepOutput,
    GrepRequest,
    GrepResult,
    IndexReport,
    Mode,
    Passage,
    PassageWindow,
    SearchRequest,
    Status,
    TextRange,
    iso,
)
from docshelf.types import Chunk, SkippedFile, Summary

if TYPE_CHECKING:
    from docshelf.answer import Answer, SourcePassage
    from docshelf.embed.prepare import Preparation
    from docshelf.embed.prepare import listen as on_model_preparation
    from docshelf.index.report import SyncReport, group_skipped, reason_kind
    from docshelf.index.sync import Confirm, Progress
    from docshelf.index.vectors import EmbedRun
    from docshelf.index.watch import Watcher
    from docshelf.search.confidence import Evidence
    from docshelf.search.results import Duplicate, Hit, SearchResult
    from docshelf.shelf.doctor import Check
    from docshelf.shelf.doctor import checks as doctor_checks
    from docshelf.shelf.evaluate import EvalRun, run_eval
    from docshelf.sources.remote import is_url
    from docshelf.store.base import BuildRecord, DocumentRecord
    from docshelf.store.copy import CopyReport

__all__ = [
    "MAX_GREP",
    "MAX_K",
    "SCHEME",
    "Answer",
    "BuildRecord",
    "Check",
    "Chunk",
    "CollectionStatus",
    "Confirm",
    "CopyReport",
    "DocumentRecord",
    "Duplicate",
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
    "PageImage",
    "Passage",
    "PassageWindow",
    "Preparation",
    "Progress",
    "SearchRequest",
    "SearchResult",
    "Shelf",
    "SkippedFile",
    "SourcePassage",
    "Status",
    "Summary",
    "SyncReport",
    "TextRange",
    "Watcher",
    "doctor_checks",
    "document_uri",
    "estimate_tokens",
    "group_skipped",
    "is_url",
    "iso",
    "join_notes",
    "on_model_preparation",
    "parse_location",
    "prefix_within",
    "reason_kind",
    "run_eval",
    "uri_for",
]

# defined in the stages, whose modules load numpy or the analyzer: imported on first use
_LAZY: dict[str, tuple[str, str]] = {
    "Answer": ("docshelf.answer", "Answer"),
    "SourcePassage": ("docshelf.answer", "SourcePassage"),
    "Preparation": ("docshelf.embed.prepare", "Preparation"),
    "on_model_preparation": ("docshelf.embed.prepare", "listen"),
    "SyncReport": ("docshelf.index.report", "SyncReport"),
    "group_skipped": ("docshelf.index.report", "group_skipped"),
    "reason_kind": ("docshelf.index.report", "reason_kind"),
    "Progress": ("docshelf.index.sync", "Progress"),
    "Confirm": ("docshelf.index.sync", "Confirm"),
    "EmbedRun": ("docshelf.index.vectors", "EmbedRun"),
    "Watcher": ("docshelf.index.watch", "Watcher"),
    "Evidence": ("docshelf.search.confidence", "Evidence"),
    "Duplicate": ("docshelf.search.results", "Duplicate"),
    "Hit": ("docshelf.search.results", "Hit"),
    "SearchResult": ("docshelf.search.results", "SearchResult"),
    "Check": ("docshelf.shelf.doctor", "Check"),
    "doctor_checks": ("docshelf.shelf.doctor", "checks"),
    "EvalRun": ("docshelf.shelf.evaluate", "EvalRun"),
    "run_eval": ("docshelf.shelf.evaluate", "run_eval"),
    "is_url": ("docshelf.sources.remote", "is_url"),
    "BuildRecord": ("docshelf.store.base", "BuildRecord"),
    "DocumentRecord": ("docshelf.store.base", "DocumentRecord"),
    "CopyReport": ("docshelf.store.copy", "CopyReport"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
