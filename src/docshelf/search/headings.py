"""Chunks that are only headings: told apart, and ranked after the passages with text."""

from __future__ import annotations

from docshelf.types import Chunk

__all__ = ["bare_headings_last", "heading_only"]


def heading_only(chunk: Chunk) -> bool:
    """Whether a chunk's text is nothing but heading lines (Markdown, or its heading path)."""
    heads = {h.strip() for h in chunk.heading_path}
    for line in chunk.text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and line not in heads and line.strip("=-") != "":
            return False
    return True


def bare_headings_last(
    window: list[tuple[str, float]], chunks: dict[str, Chunk], keyword: dict[str, int]
) -> list[tuple[str, float]]:
    """A chunk that is only a heading ("# Deploy guide") is short enough to top BM25 and close to
    many queries in embedding space while saying nothing: it goes after the chunks with text, and
    one holding query words only after those with text holding them (when it is the one page the
    words name, it stays above neighbours by meaning)."""
    bare = {cid for cid, _ in window if cid in chunks and heading_only(chunks[cid])}
    if not bare:
        return window
    left = sum(cid in keyword for cid, _ in window if cid not in bare)  # text chunks holding query words
    out: list[tuple[str, float]] = []
    named: list[tuple[str, float]] = []
    rest: list[tuple[str, float]] = []
    for hit in window:
        if hit[0] in bare:
            (named if hit[0] in keyword else rest).append(hit)
        else:
            out.append(hit)
            left -= hit[0] in keyword
        if not left:  # never above its own place
            out += named
            named.clear()
    return out + named + rest
