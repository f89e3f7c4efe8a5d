"""Search hits and passages for people: one block per hit that stays readable at 80 columns.

Every piece of document text goes through ``output.data`` (plain ``Text``, control characters
visible); styles are set here, never parsed from what is printed.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from docshelf.cli.output import data, name, out

if TYPE_CHECKING:
    from docshelf.shelf import Hit, SearchResult

__all__ = [
    "INDENT",
    "also_in_line",
    "heading_line",
    "hit_block",
    "hits",
    "indented",
    "location",
    "number_width",
    "score_label",
    "snippet_text",
    "wrapped",
]

INDENT = 3


def score_label(hit: Hit) -> str:
    """How sure a hit is, in words a reader can use: the calibrated 0-1 confidence (fused z-scores
    mean little to a person)."""
    return f"confidence {hit.confidence:.2f}"


def location(hit: Hit) -> str:
    """The hit as an argument for `docshelf read` (quoted for the shell when it must be)."""
    where = (
        f"{hit.path}#page={hit.page}"
        if hit.path.lower().endswith(".pdf") and hit.page
        else (f"{hit.path}:{hit.line_start}-{hit.line_end}")
    )
    return shlex.quote(where)


def snippet_text(snippet: str) -> Text:
    """The snippet with the search's ``**match**`` marks shown bold (document text stays data)."""
    text = Text()
    for i, part in enumerate(snippet.split("**")):
        text.append_text(data(part, "bold" if i % 2 else ""))
    return text


def heading_line(heading_path: Iterable[str], title: str | None = None) -> Text | None:
    parts = list(heading_path) or ([title] if title else [])
    return data(" › ".join(parts), "italic") if parts else None


def wrapped(text: Text, console: Console = out, first: int = INDENT, rest: int = INDENT) -> Text:
    """``text`` wrapped to the console's width, ``first`` blanks before its first line and ``rest``
    before the others; no trailing blanks, so a pipe gets clean lines."""
    lines = text.wrap(console, max(20, console.width - max(first, rest)))
    result = Text()
    for i, line in enumerate(lines):
        line.rstrip()
        result.append_text(Text.assemble("\n" if i else "", " " * (rest if i else first), line))
    return result


def indented(text: Text, console: Console = out, indent: int = INDENT) -> Text:
    return wrapped(text, console, indent, indent)


def number_width(count: int) -> int:
    """The columns a hit's number takes with its blank ("1. ", "10. "): its text is indented as much."""
    return max(INDENT, len(f"{count}.") + 1)


def hit_block(
    number: int, hit: Hit, with_collection: bool, with_id: bool = False, indent: int = INDENT
) -> Text:
    """Citation line (+ collection, how it was found), heading path, wrapped snippet; ``indent``:
    the width of the list's largest number and a blank, so every citation starts in one column."""
    mark = f"{number}.".ljust(indent)
    line = Text.assemble(Text(mark, style="bold"), name(hit.citation, "bold cyan"))
    details = [hit.collection] if with_collection else []
    details += [label] if (label := score_label(hit)) else []
    if details:
        line.append_text(data("  " + " · ".join(details), "dim"))
    parts = [wrapped(line, first=0, rest=indent)]
    if (heading := heading_line(hit.heading_path, hit.title)) is not None:
        parts.append(indented(heading, indent=indent))
    parts.append(indented(snippet_text(hit.snippet), indent=indent))
    if hit.also_in:
        parts.append(wrapped(also_in_line(hit), first=indent, rest=indent))
    if with_id:
        parts.append(indented(data(f"id {hit.chunk_id}", "dim"), indent=indent))
    return Text("\n").join(parts)


_ALSO_SHOWN = 3


def also_in_line(hit: Hit) -> Text:
    """Where else the passage is, word for word: its first places, then how many more."""
    shown = [d.citation for d in hit.also_in[:_ALSO_SHOWN]]
    more = len(hit.also_in) - len(shown)
    line = Text("also in ", style="dim")
    for i, citation in enumerate(shown):
        line.append_text(name(citation, "dim cyan"))
        if i < len(shown) - 1:
            line.append(", ", style="dim")
    if more:
        line.append(f" and {more} more", style="dim")
    return line


def hits(result: SearchResult, with_collection: bool, with_id: bool = False) -> Text:
    """The whole result: a header line, then one block per hit, blank lines between."""
    noun = "hit" if len(result.hits) == 1 else "hits"
    blocks = [Text(f"{len(result.hits)} {noun} ({result.mode}, {result.took_ms:.0f} ms)", style="dim")]
    indent = number_width(len(result.hits))
    blocks += [hit_block(n, hit, with_collection, with_id, indent) for n, hit in enumerate(result.hits, 1)]
    return Text("\n\n").join(blocks)
