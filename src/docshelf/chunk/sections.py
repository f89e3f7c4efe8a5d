"""The sections a chunker packs: sorted, clipped and covering every piece of body text."""

from __future__ import annotations

from docshelf.parse.text import trim_span
from docshelf.types import ParsedDocument, Section

__all__ = ["normalise_sections"]


def normalise_sections(doc: ParsedDocument) -> list[Section]:
    """Sorted, clipped, non-overlapping, trimmed sections covering all body text.

    Gaps holding text (a parser that skipped something) become "text" sections,
    so no body text is ever left out of the index.
    """
    text = doc.text
    out: list[Section] = []
    pos = max(0, doc.body_start)

    def add(start: int, end: int, like: Section | None, kind: str | None = None) -> None:
        s, e = trim_span(text, start, end)
        if e > s:
            if like is None:
                out.append(Section(s, e, kind or "text"))
            else:
                out.append(Section(s, e, kind or like.kind, like.heading_path, like.page, like.level))

    for sec in sorted(doc.sections, key=lambda x: (x.start, x.end)):
        s, e = max(sec.start, pos), min(sec.end, len(text))
        if s > pos:
            add(pos, s, out[-1] if out else sec, "text")
        if e > s:
            add(s, e, sec)
        pos = max(pos, e)
    if pos < len(text):
        add(pos, len(text), out[-1] if out else None, "text")
    return out
