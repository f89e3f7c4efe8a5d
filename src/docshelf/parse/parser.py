"""What every parser is: a name, the extensions it takes and a parse of a file's bytes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from docshelf.types import ParsedDocument

__all__ = ["Parser"]


@runtime_checkable
class Parser(Protocol):
    """Turns one file's bytes into a ParsedDocument.

    ``extensions`` are lower-case with a leading dot. Parsers of binary formats
    (PDF, DOCX) also set a class attribute ``binary = True`` and, when paged,
    ``Section.page``. Every parser raises ParseError with an actionable message
    for files it cannot read.
    """

    # Read-only properties, so a plain class attribute such as
    # ``extensions = (".pdf",)`` (inferred as ``tuple[str]``) satisfies the protocol.
    @property
    def name(self) -> str:
        """Short name, stored as the document's ``file_type``."""
        ...

    @property
    def extensions(self) -> tuple[str, ...]:
        """File extensions handled, with a leading dot."""
        ...

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Parse ``data``, the content of the file at ``path`` (used in messages)."""
        ...
