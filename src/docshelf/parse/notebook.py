"""Jupyter notebooks (.ipynb): markdown cells with their headings, code cells, text outputs."""

from __future__ import annotations

import json
from typing import Any

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder
from docshelf.parse.decode import read_text
from docshelf.parse.markdown import markdown_sections
from docshelf.types import ParsedDocument

__all__ = ["NotebookParser"]

_TEXT_OUTPUTS = ("text/plain", "text/markdown")


def _source(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else ""


class NotebookParser:
    """Notebook cells in order: markdown (headings start sections), code, and the text of
    stream and result outputs (images and HTML outputs are left out)."""

    name: str = "notebook"
    extensions: tuple[str, ...] = (".ipynb",)
    binary: bool = False

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read the notebook's JSON."""
        text, _ = read_text(data, path)
        try:
            nb = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ParseError(f"{path}: is not a valid notebook (JSON: {exc}); exclude it") from None
        cells = nb.get("cells") if isinstance(nb, dict) else None
        if cells is None and isinstance(nb, dict):  # nbformat 3 kept cells inside worksheets
            cells = [c for w in nb.get("worksheets", []) if isinstance(w, dict) for c in w.get("cells", [])]
        if not isinstance(cells, list):
            raise ParseError(f"{path}: is not a Jupyter notebook (no cells); exclude it")
        builder = TextBuilder()
        title: str | None = None
        language = ((nb.get("metadata") or {}).get("kernelspec") or {}).get("language") or "code"
        for cell in cells:
            if not isinstance(cell, dict):
                continue
            source = _source(cell.get("source") or cell.get("input"))
            kind = cell.get("cell_type")
            if kind == "markdown":
                sections, first = markdown_sections(source)
                title = title or first
                for s in sections:
                    part = source[s.start : s.end]
                    if s.kind == "heading":
                        builder.heading(s.heading_path[-1] if s.heading_path else part, s.level)
                    else:
                        builder.add(part, s.kind)
            elif kind == "code":
                builder.add(source, "code")
                for out in cell.get("outputs") or []:
                    builder.add(_output_text(out), "code")
            elif source.strip():
                builder.add(source)
        return ParsedDocument(
            text=builder.text,
            sections=builder.sections,
            file_type=self.name,
            title=title,
            metadata={"language": str(language)},
        )


def _output_text(out: Any) -> str:
    if not isinstance(out, dict):
        return ""
    if out.get("output_type") == "stream":
        return _source(out.get("text"))
    if out.get("output_type") == "error":
        return "\n".join(str(x) for x in [out.get("ename"), out.get("evalue")] if x)
    data = out.get("data") or {}
    for mime in _TEXT_OUTPUTS:
        if mime in data:
            return _source(data[mime])
    return _source(out.get("text"))
