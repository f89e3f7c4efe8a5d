"""One pass over a parsed document's strings: code points that cannot be stored are replaced.

PDF text layers and damaged files yield lone surrogates (U+D800..U+DFFF), which no UTF-8
encoder accepts: hashing, storing or printing the chunk would fail the whole file. They and
the noncharacters U+FFFE/U+FFFF become U+FFFD, one code point for one, so every offset into
the text (sections, chunk spans, line numbers) stays valid.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from docshelf.types import ParsedDocument

__all__ = ["clean_document", "clean_text"]

_UNENCODABLE = re.compile("[\ud800-\udfff\ufffe\uffff]")


def clean_text(text: str) -> str:
    """``text`` with unencodable code points replaced by U+FFFD (same length)."""
    return _UNENCODABLE.sub("\ufffd", text)


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_clean(v) for v in value)
    return value


def clean_document(doc: ParsedDocument) -> ParsedDocument:
    """``doc`` with its text, title, heading paths and metadata cleaned (the same object when
    nothing needed it, which is nearly always)."""
    dirty = _UNENCODABLE.search(doc.text) is not None
    dirty = dirty or (doc.title is not None and _UNENCODABLE.search(doc.title) is not None)
    dirty = dirty or any(_UNENCODABLE.search(h) for s in doc.sections for h in s.heading_path)
    metadata = _clean(doc.metadata)
    if not dirty and metadata == doc.metadata:
        return doc
    return replace(
        doc,
        text=clean_text(doc.text),
        title=clean_text(doc.title) if doc.title is not None else None,
        sections=[replace(s, heading_path=tuple(map(clean_text, s.heading_path))) for s in doc.sections],
        metadata=metadata,
    )
