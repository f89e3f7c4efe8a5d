"""Excel binary workbooks (.xlsb): the same package as .xlsx, with the workbook, sheets and
shared strings as BIFF12 records instead of XML. A small reader of the records that hold
text and values (MS-XLSB 2.4); drawings, charts and comments are XML parts as in .xlsx."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder
from docshelf.parse.limits import Deadline, ParseLimits
from docshelf.parse.ooxml import Package, core_title, open_package
from docshelf.parse.xlsx import add_sheet_extras, sheet_rows_to_builder
from docshelf.types import ParsedDocument

__all__ = ["XlsbParser", "records"]

_ROW, _BLANK, _RK, _ERROR, _BOOL, _REAL, _ST, _ISST = 0, 1, 2, 3, 4, 5, 6, 7
_FMLA_STRING, _FMLA_NUM, _FMLA_BOOL, _FMLA_ERROR = 8, 9, 10, 11
_SST_ITEM, _BUNDLE_SH, _HEADER_FOOTER = 19, 156, 479
_ERRORS = {0x00: "#NULL!", 0x07: "#DIV/0!", 0x0F: "#VALUE!", 0x17: "#REF!", 0x1D: "#NAME?", 0x24: "#NUM!",
           0x2A: "#N/A", 0x2B: "#GETTING_DATA"}  # fmt: skip


def records(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(record type, payload) of a BIFF12 stream; stops at a truncated record."""
    pos, end = 0, len(data)
    while pos < end:
        kind = 0
        for shift in (0, 7):
            if pos >= end:
                return
            byte = data[pos]
            pos += 1
            kind |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
        size = 0
        for shift in (0, 7, 14, 21):
            if pos >= end:
                return
            byte = data[pos]
            pos += 1
            size |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
        if pos + size > end:
            return
        yield kind, data[pos : pos + size]
        pos += size


def _wide(payload: bytes, at: int) -> tuple[str, int]:
    """An XLWideString (character count, UTF-16LE) at ``at``; (text, offset after it)."""
    if at + 4 > len(payload):
        return "", len(payload)
    (count,) = struct.unpack_from("<I", payload, at)
    start = at + 4
    if count == 0xFFFFFFFF:  # an XLNullableWideString that is null
        return "", start
    stop = min(len(payload), start + 2 * count)
    return payload[start:stop].decode("utf-16-le", "replace"), stop


def _rk(raw: int) -> float:
    if raw & 0x02:
        value = float(struct.unpack("<i", struct.pack("<I", raw & 0xFFFFFFFC))[0] >> 2)
    else:
        value = struct.unpack("<d", struct.pack("<Q", (raw & 0xFFFFFFFC) << 32))[0]
    return value / 100 if raw & 0x01 else value


def _cell(kind: int, payload: bytes, strings: list[str]) -> tuple[int, Any] | None:
    """(column, value) of a cell record, None for other records."""
    if kind > _FMLA_ERROR or kind in (_ROW, _BLANK) or len(payload) < 8:
        return None
    (col,) = struct.unpack_from("<I", payload, 0)
    body = payload[8:]
    value: Any = None
    if kind == _RK and len(body) >= 4:
        value = _rk(struct.unpack_from("<I", body)[0])
    elif kind in (_REAL, _FMLA_NUM) and len(body) >= 8:
        value = struct.unpack_from("<d", body)[0]
    elif kind in (_BOOL, _FMLA_BOOL) and body:
        value = body[0] == 1
    elif kind in (_ERROR, _FMLA_ERROR) and body:
        value = _ERRORS.get(body[0], "#ERROR")
    elif kind in (_ST, _FMLA_STRING):
        value = _wide(body, 0)[0]
    elif kind == _ISST and len(body) >= 4:
        index = struct.unpack_from("<I", body)[0]
        value = strings[index] if index < len(strings) else None
    return col, value


def _rows(data: bytes, strings: list[str], deadline: Deadline) -> Iterator[tuple[int, list[Any]]]:
    row: dict[int, Any] = {}
    number = 0
    for kind, payload in records(data):
        if kind == _ROW and len(payload) >= 4:
            if row:
                yield number, [row.get(i) for i in range(max(row) + 1)]
            deadline.check()
            number = struct.unpack_from("<I", payload)[0] + 1
            row = {}
            continue
        cell = _cell(kind, payload, strings)
        if cell is not None and cell[0] < 16384:  # the sheet's last column is XFD
            row[cell[0]] = cell[1]
    if row:
        yield number, [row.get(i) for i in range(max(row) + 1)]


def _header_footer(data: bytes) -> list[str]:
    for kind, payload in records(data):
        if kind == _HEADER_FOOTER and len(payload) >= 4:
            out, at = [], 4  # 4 flag bytes, then six XLNullableWideStrings
            for _ in range(6):
                text, at = _wide(payload, at)
                out.append(text)
            return [t for t in out if t]
    return []


class XlsbParser:
    """Excel binary workbooks: sheets, shared strings and cell values as in .xlsx (numbers as
    numbers: their display formats are not read), with comments, text boxes and charts."""

    name: str = "xlsb"
    extensions: tuple[str, ...] = (".xlsb",)
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read every worksheet of the binary workbook in ``data``."""
        package = open_package(data, path, "Excel binary (.xlsb)", self.limits.max_unzipped_bytes)
        deadline = self.limits.deadline(path)
        builder = TextBuilder()
        sheets: list[str] = []
        truncated: list[str] = []
        with package.archive:
            workbook = package.main_part()
            strings = _strings(package, workbook)
            targets = {rid: t for rid, kind, t in package.rels(workbook) if kind == "worksheet"}
            for kind, payload in records(package.read(workbook)):
                if kind != _BUNDLE_SH or len(payload) < 8:
                    continue
                # hsState and iTabID come first; writers disagree on their width, so the
                # relationship id is looked for where either puts it
                rid, name = "", ""
                for offset in (8, 12):
                    rid, at = _wide(payload, offset)
                    if rid in targets:
                        name = _wide(payload, at)[0]
                        break
                sheets.append(name)
                target = targets.get(rid)
                if target is None or not package.has(target):
                    continue
                sheet = package.read(target)
                if sheet_rows_to_builder(builder, name, _rows(sheet, strings, deadline)):
                    truncated.append(name)
                add_sheet_extras(package, target, builder, _header_footer(sheet))
            title = core_title(package)
        if not sheets:
            raise ParseError(f"{path}: no worksheets found (damaged .xlsb?); open and save it again")
        metadata: dict[str, Any] = {"sheets": sheets}
        if truncated:
            metadata["truncated_sheets"] = truncated
        return ParsedDocument(
            text=builder.text, sections=builder.sections, file_type=self.name, title=title, metadata=metadata
        )


def _strings(package: Package, workbook: str) -> list[str]:
    out: list[str] = []
    for target in package.related(workbook, "sharedStrings"):
        for kind, payload in records(package.read(target)):
            if kind == _SST_ITEM and payload:
                out.append(_wide(payload, 1)[0])  # a flags byte, then the string
    return out
