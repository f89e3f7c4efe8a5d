"""Spreadsheet rows as text, and CSV/TSV files (stdlib csv); workbooks are in xlsx.py and xlsb.py.

Each row becomes one line of "header: value; header: value" pairs, so a chunk of
rows still says what each value is; each sheet is a heading of its own.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable
from typing import Any

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder
from docshelf.parse.decode import encoding_metadata, read_text
from docshelf.types import ParsedDocument

__all__ = ["MAX_ROWS", "CsvParser", "cell_text", "rows_to_lines"]

MAX_ROWS = 50_000
"""Rows read per sheet; the rest is left out with a note in the text and metadata."""


def cell_text(value: Any) -> str:
    """A cell value as text: whole floats without ".0", dates in ISO form."""
    return _cell(value)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return " ".join(str(value).split())


def _column_name(index: int) -> str:
    """Spreadsheet column letters: 0 -> A, 26 -> AA."""
    name = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = chr(ord("A") + rem) + name
    return name


def _rows_to_lines(rows: Iterable[Iterable[Any]]) -> tuple[list[str], bool]:
    """Lines for a table whose first non-empty row is the header; (lines, truncated)."""
    return rows_to_lines(enumerate(rows, start=1))


def rows_to_lines(rows: Iterable[tuple[int, Iterable[Any]]]) -> tuple[list[str], bool]:
    """Lines for (row number, values) rows, the first non-empty one being the header;
    (lines, truncated)."""
    headers: list[str] | None = None
    lines: list[str] = []
    for number, raw in rows:
        values = [_cell(v) for v in raw]
        if not any(values):
            continue
        if headers is None:
            headers = [v or f"column {_column_name(i)}" for i, v in enumerate(values)]
            lines.append("columns: " + "; ".join(headers))
            continue
        if number > MAX_ROWS:
            lines.append(f"(rows after row {MAX_ROWS:,} are not indexed: over the cap of rows per sheet)")
            return lines, True
        pairs = [
            f"{headers[i] if i < len(headers) else f'column {_column_name(i)}'}: {v}"
            for i, v in enumerate(values)
            if v
        ]
        lines.append(f"row {number}: " + "; ".join(pairs))
    return lines, False


class CsvParser:
    """CSV and TSV files (UTF-8); the delimiter of a .csv is detected from its start."""

    name: str = "csv"
    extensions: tuple[str, ...] = (".csv", ".tsv")
    binary: bool = False

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Decode ``data`` and turn its rows into header-labelled lines."""
        text, encoding = read_text(data, path)
        dialect: type[csv.Dialect] | csv.Dialect
        if path.lower().endswith(".tsv"):
            dialect = csv.excel_tab
        else:
            try:
                dialect = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
            except csv.Error:
                dialect = csv.excel
        try:
            lines, cut = _rows_to_lines(csv.reader(io.StringIO(text, newline=""), dialect))
        except csv.Error as exc:
            raise ParseError(f"{path}: malformed CSV ({exc}); fix the quoting or exclude it") from None
        builder = TextBuilder()
        builder.add("\n".join(lines), "table")
        metadata: dict[str, Any] = {**encoding_metadata(encoding), **({"truncated": True} if cut else {})}
        return ParsedDocument(
            text=builder.text, sections=builder.sections, file_type=self.name, metadata=metadata
        )
