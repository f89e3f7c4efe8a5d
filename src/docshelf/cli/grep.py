"""`docshelf grep`: grep over the indexed documents, every format, with grep's output and exit codes.

Like `grep -rnF` by default (a fixed string, case-sensitive, line numbers); -E takes a regular
expression (RE2), -i ignores case, -w whole words, -l and -c list files and counts, -C adds context.
Exit 0 when something matched, 1 when nothing did, 2 on an error, as grep.
"""

from __future__ import annotations

import sqlite3
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from docshelf.cli.common import ConfigOpt, DataDirOpt, JsonOpt, load, open_shelf
from docshelf.cli.output import err, message, print_json, visible
from docshelf.errors import DocshelfError

if TYPE_CHECKING:
    from docshelf.shelf import GrepMatch, GrepOutput, GrepRequest, GrepResult, Shelf

__all__ = ["register"]


def _line(prefix: str, text: str, spans: tuple[tuple[int, int], ...] = ()) -> None:
    """One output line: the place (with grep's separators) and the text; the matches highlighted
    on a terminal, the text as it is (tabs too) in a pipe."""
    from rich.text import Text

    from docshelf.cli.output import out

    shown = visible(text).replace("\n", "\u240a")
    if not out.is_terminal:
        sys.stdout.write(f"{visible(prefix)}{shown}\n")
        return
    body = Text(shown)
    for start, end in spans:
        body.stylize("bold red", start, end)
    out.print(Text(visible(prefix), style="magenta") + body)


def _base(m: GrepMatch) -> str:
    """The path, or ``file.pdf#page=N`` for a PDF (its lines count within the page)."""
    return m.citation if m.page is not None and "#page=" in m.citation else m.path


def _print_match(m: GrepMatch) -> None:
    """The match's lines as ``PLACE:LINE:TEXT``, context lines as grep's ``PLACE-LINE-TEXT``."""
    base = _base(m)
    for n, text in enumerate(m.before, start=m.line - len(m.before)):
        _line(f"{base}-{n}-", text)
    offset = 0
    lines = m.text.split("\n")
    for n, text in enumerate(lines, start=m.line):
        end = offset + len(text)
        spans = tuple(
            (max(s, offset) - offset, min(e, end) - offset) for s, e in m.spans if s < end and e > offset
        )
        _line(f"{base}:{n}:", text, spans)
        offset = end + 1
    for n, text in enumerate(m.after, start=m.line + len(lines)):
        _line(f"{base}-{n}-", text)


def _pages(shelf: Shelf, req: GrepRequest) -> list[GrepResult]:
    """Every page of results: the CLI goes through all of them, as grep reads every file."""
    from dataclasses import replace

    pages = [shelf.grep(req)]
    while pages[-1].cursor:
        pages.append(shelf.grep(replace(req, cursor=pages[-1].cursor)))
    return pages


def grep(
    pattern: Annotated[str, typer.Argument(help="a fixed string, or a regular expression with -E")],
    extended: Annotated[
        bool, typer.Option("--extended-regexp", "-E", help="PATTERN is an RE2 regex")
    ] = False,
    fixed: Annotated[bool, typer.Option("--fixed-strings", "-F", help="PATTERN is a fixed string")] = False,
    ignore_case: Annotated[bool, typer.Option("--ignore-case", "-i", help="ignore case")] = False,
    word: Annotated[bool, typer.Option("--word-regexp", "-w", help="whole words only")] = False,
    files: Annotated[
        bool, typer.Option("--files-with-matches", "-l", help="only the paths of documents that match")
    ] = False,
    count: Annotated[bool, typer.Option("--count", "-c", help="matching lines per document")] = False,
    context: Annotated[int, typer.Option("--context", "-C", min=0, max=20, help="lines around")] = 0,
    collection: Annotated[list[str] | None, typer.Option("--collection", help="only these")] = None,
    path: Annotated[str | None, typer.Option("--path", help="glob on the document path")] = None,
    file_type: Annotated[list[str] | None, typer.Option("--type", help="file type, e.g. pdf")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="any of these tags")] = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print every line of the indexed documents (PDF, Office, e-mail, notebooks, text) that holds
    PATTERN, as grep -rn does: PATH:LINE:TEXT (FILE.pdf#page=N:LINE:TEXT, the line within the page)."""
    from docshelf.shelf import MAX_GREP, GrepRequest

    if extended and fixed:
        raise typer.BadParameter("-E and -F are exclusive")
    output: GrepOutput = "files_with_matches" if files else "count" if count else "content"
    try:
        req = GrepRequest(
            pattern, extended, ignore_case, word, tuple(collection or ()), path, tuple(tag or ()),
            tuple(file_type or ()), False, output, context, MAX_GREP,
        )  # fmt: skip
        with open_shelf(load(config, data_dir, None, read_only=True)) as shelf:
            pages = _pages(shelf, req)
    except (DocshelfError, OSError, sqlite3.Error) as exc:
        err.print(message(("docshelf grep:", "red"), f" {exc}"))
        raise typer.Exit(2) from None
    counts = [c for p in pages for c in p.counts]
    if as_json:
        merged = pages[0].as_dict()
        merged.update(
            matches=[m.as_dict() for p in pages for m in p.matches], counts=[c.as_dict() for c in counts],
            total_lines=sum(c.lines for c in counts), documents_read=sum(p.documents_read for p in pages),
            cursor=None, note=pages[-1].note,
        )  # fmt: skip
        print_json(merged)
    elif files:
        for c in counts:
            _line("", c.path)
    elif count:
        for c in counts:
            _line(f"{c.path}:", str(c.lines))
    else:
        for i, m in enumerate(m for p in pages for m in p.matches):
            if context and i:
                _line("--", "")
            _print_match(m)
    notes = dict.fromkeys(p.note for p in pages if p.note and (p.scanned or p.timed_out))
    for note in notes if sys.stderr.isatty() else ():
        err.print(message(("note:", "dim"), f" {note}"))
    raise typer.Exit(0 if counts else 1)


def register(app: typer.Typer) -> None:
    """Add `grep` to the docshelf CLI."""
    app.command(name="grep")(grep)
