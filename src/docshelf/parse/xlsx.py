"""Excel workbooks (.xlsx, .xlsm, .xltx, .xltm; transitional and Strict OOXML) read from the
package: every sheet's cells (formulas as last computed), then its header and footer, comments,
text boxes and charts. Sheets are streamed, so a big sheet never sits in memory whole."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from typing import Any
from xml.etree import ElementTree

from docshelf.parse.assemble import TextBuilder
from docshelf.parse.limits import Deadline, ParseLimits
from docshelf.parse.ooxml import Package, all_text, cached_values, core_title, local, open_package
from docshelf.parse.sheets import rows_to_lines
from docshelf.types import ParsedDocument

__all__ = ["XlsxParser", "add_sheet_extras", "sheet_rows_to_builder"]

_REF = re.compile(r"([A-Z]+)(\d+)")
_HF_CODES = re.compile(r'&"[^"]*"|&\d+|&[A-Za-z]|&&')
_DATE_FORMATS = frozenset({*range(14, 23), *range(27, 37), *range(45, 48), *range(50, 59)})
_DATE_TOKEN = re.compile(r"(?<![\\\w])(?:y+|d+|m+|h+|s+)(?!\w)", re.IGNORECASE)
_QUOTED = re.compile(r'"[^"]*"|\[[^\]]*\]')


def _col(ref: str) -> int:
    m = _REF.match(ref)
    if m is None:
        return -1
    n = 0
    for ch in m.group(1):
        n = n * 26 + ord(ch) - 64
    return n - 1


def _shared_strings(package: Package, workbook: str) -> list[str]:
    out: list[str] = []
    for target in package.related(workbook, "sharedStrings"):
        for si in package.xml(target):
            main = "".join(t.text or "" for el in si if local(el.tag) in ("t", "r") for t in el.iter()
                           if local(t.tag) == "t")  # fmt: skip
            phonetic = "".join(t.text or "" for el in si if local(el.tag) == "rPh" for t in el.iter()
                               if local(t.tag) == "t")  # fmt: skip
            out.append(f"{main} ({phonetic})" if phonetic and phonetic != main else main)
    return out


def _date_styles(package: Package, workbook: str) -> set[int]:
    """Indices of the cell formats that show a number as a date or time."""
    dates: set[int] = set()
    for target in package.related(workbook, "styles"):
        root = package.xml(target)
        custom: set[int] = set()
        for el in root.iter():
            if local(el.tag) == "numFmt":
                code = _QUOTED.sub("", el.get("formatCode") or "")
                if _DATE_TOKEN.search(code) and (el.get("numFmtId") or "").isdigit():
                    custom.add(int(el.get("numFmtId") or 0))
        xfs = next((el for el in root if local(el.tag) == "cellXfs"), None)
        for i, xf in enumerate(xfs if xfs is not None else []):
            fmt = int(xf.get("numFmtId") or 0)
            if fmt in _DATE_FORMATS or fmt in custom:
                dates.add(i)
    return dates


def _as_date(serial: float, base: dt.datetime) -> Any:
    try:
        value = base + dt.timedelta(days=serial)
    except (OverflowError, ValueError):
        return serial
    return value.date() if value.time() == dt.time() else value


def _rows(package: Package, sheet: str, strings: list[str], dates: set[int], base: dt.datetime,
          deadline: Deadline) -> Iterator[tuple[int, list[Any]]]:  # fmt: skip
    """(row number, values by column) of a worksheet, streamed."""
    with package.archive.open(package.names.get(sheet) or package.lower[sheet.lower()]) as fh:
        row: dict[int, Any] = {}
        number = 0
        col = -1
        for _, el in ElementTree.iterparse(fh, events=("end",)):
            name = local(el.tag)
            if name == "c":
                # r is optional: a cell without one is the one after the previous cell
                col = _col(el.get("r") or "") if el.get("r") else col + 1
                if col < 0:
                    col = max(row, default=-1) + 1
                row[col] = _value(el, strings, dates, base)
                el.clear()
            elif name == "row":
                deadline.check()
                ref = el.get("r") or ""
                number = int(ref) if ref.isdigit() else number + 1
                if row:
                    width = max(row) + 1
                    yield number, [row.get(i) for i in range(width)]
                row = {}
                col = -1
                el.clear()


def _value(c: ElementTree.Element, strings: list[str], dates: set[int], base: dt.datetime) -> Any:
    kind = c.get("t") or "n"
    v = next((el.text for el in c if local(el.tag) == "v"), None)
    if kind == "inlineStr":
        return "".join(t.text or "" for t in c.iter() if local(t.tag) == "t")
    if v is None:
        return None
    if kind == "s":
        index = int(v) if v.isdigit() else -1
        return strings[index] if 0 <= index < len(strings) else None
    if kind == "b":
        return v == "1"
    if kind in ("str", "e"):
        return v
    try:
        number = float(v)
    except ValueError:
        return v
    return _as_date(number, base) if int(c.get("s") or 0) in dates else number


def sheet_rows_to_builder(builder: TextBuilder, name: str, rows: Iterator[tuple[int, list[Any]]]) -> bool:
    """A sheet as a heading and its rows as one table block; True when rows were cut."""
    builder.heading(f"Sheet: {name}", 1)
    lines, cut = rows_to_lines(rows)
    builder.add("\n".join(lines), "table")
    return cut


def add_sheet_extras(package: Package, sheet: str, builder: TextBuilder, header_footer: list[str]) -> None:
    """A sheet's header/footer text, comments, text boxes and charts."""
    texts = [" ".join(_HF_CODES.sub(" ", t).split()) for t in header_footer]
    if any(texts):
        builder.add("Header and footer: " + " | ".join(dict.fromkeys(t for t in texts if t)))
    # .xlsb keeps its comments as BIFF12 records (not read); its drawings and charts are XML
    for target in (t for t in package.related(sheet, "comments") if t.endswith(".xml")):
        for comment in package.xml(target).iter():
            if local(comment.tag) == "comment":
                text = " ".join("".join(t.text or "" for t in comment.iter() if local(t.tag) == "t").split())
                if text:
                    builder.add("Comment: " + text)
    for drawing in package.related(sheet, "drawing"):
        boxes = all_text(package.xml(drawing))
        if boxes:
            builder.add("\n".join(boxes))
        for chart in package.related(drawing, "chart"):
            values = cached_values(package.xml(chart))
            if values:
                builder.add("Chart: " + "; ".join(dict.fromkeys(values)))


def _header_footer(package: Package, sheet: str) -> list[str]:
    """Header and footer strings: small, after the cells; read with a second streaming pass."""
    out: list[str] = []
    with package.archive.open(package.names.get(sheet) or package.lower[sheet.lower()]) as fh:
        for _, el in ElementTree.iterparse(fh, events=("end",)):
            if local(el.tag) in ("oddHeader", "oddFooter", "evenHeader", "evenFooter", "firstHeader",
                                 "firstFooter") and el.text:  # fmt: skip
                out.append(el.text)
            elif local(el.tag) in ("c", "row"):
                el.clear()
    return out


class XlsxParser:
    """Excel workbooks: every sheet's cell values as "header: value" rows under a heading."""

    name: str = "xlsx"
    extensions: tuple[str, ...] = (".xlsx", ".xlsm", ".xltx", ".xltm")
    binary: bool = True

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read every worksheet of the workbook in ``data``."""
        package = open_package(data, path, "Excel (.xlsx)", self.limits.max_unzipped_bytes)
        deadline = self.limits.deadline(path)
        builder = TextBuilder()
        truncated: list[str] = []
        sheets: list[str] = []
        with package.archive:
            workbook = package.main_part()
            root = package.xml(workbook)
            strings = _shared_strings(package, workbook)
            dates = _date_styles(package, workbook)
            pr = next((el for el in root if local(el.tag) == "workbookPr"), None)
            date1904 = pr is not None and (pr.get("date1904") or "").lower() in ("1", "true")
            base = dt.datetime(1904, 1, 1) if date1904 else dt.datetime(1899, 12, 30)
            targets = {rid: t for rid, kind, t in package.rels(workbook) if kind == "worksheet"}
            for sheet in (el for el in root.iter() if local(el.tag) == "sheet"):
                name = sheet.get("name") or ""
                rid = next((v for k, v in sheet.attrib.items() if local(k) == "id" and k != "id"), "")
                sheets.append(name)
                target = targets.get(rid)
                if target is None or not package.has(target):
                    builder.heading(f"Sheet: {name}", 1)
                    continue
                rows = _rows(package, target, strings, dates, base, deadline)
                if sheet_rows_to_builder(builder, name, rows):
                    truncated.append(name)
                add_sheet_extras(package, target, builder, _header_footer(package, target))
            title = core_title(package)
        metadata: dict[str, Any] = {"sheets": sheets}
        if truncated:
            metadata["truncated_sheets"] = truncated
        return ParsedDocument(
            text=builder.text, sections=builder.sections, file_type=self.name, title=title, metadata=metadata
        )
