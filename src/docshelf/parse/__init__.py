"""Parsing: file bytes -> ParsedDocument (text, sections, title, metadata)."""

from __future__ import annotations

from docshelf.parse.decode import decode_text
from docshelf.parse.frontmatter import split_frontmatter
from docshelf.parse.markdown import MarkdownParser
from docshelf.parse.registry import Parser, ParserRegistry, default_registry
from docshelf.parse.rst import RstParser
from docshelf.parse.text import TextParser

__all__ = [
    "MarkdownParser",
    "Parser",
    "ParserRegistry",
    "RstParser",
    "TextParser",
    "decode_text",
    "default_registry",
    "split_frontmatter",
]
