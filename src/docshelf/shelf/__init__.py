"""The use-case layer: one Shelf that the CLI, the MCP server and Python programs call.

    from docshelf import Shelf

    with Shelf() as shelf:
        shelf.index(["~/notes"])
        hit = shelf.search("how do we page someone").hits[0]
        print(hit.citation, shelf.read_passage(hit.chunk_id, after=1).passages[0].chunk.text)

Importing this package loads no numpy, tantivy or onnxruntime; they load when an index opens.
"""

from __future__ import annotations

from docshelf.shelf.core import Shelf, join_notes
from docshelf.shelf.types import (
    CollectionStatus,
    ForgetReport,
    IndexReport,
    Passage,
    PassageWindow,
    SearchRequest,
    Status,
    TextRange,
)

__all__ = [
    "CollectionStatus",
    "ForgetReport",
    "IndexReport",
    "Passage",
    "PassageWindow",
    "SearchRequest",
    "Shelf",
    "Status",
    "TextRange",
    "join_notes",
]
