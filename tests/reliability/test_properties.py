"""Property tests over the whole parse -> chunk -> analyze path, for every text format.

tests/test_chunk.py checks the chunker on Markdown-shaped input and tests/test_analyze.py the
analyzer on short strings; these feed arbitrary Unicode (controls, lone CRs, U+2028, emoji, CJK,
RTL, combining marks) through each registered text parser and check that offsets in the stored
form still map back to the exact source text.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.analyze import Analyzer
from docshelf.chunk import LineIndex, chunk_document
from docshelf.embed import HashEmbedder
from docshelf.errors import ParseError
from docshelf.parse import default_registry

REGISTRY = default_registry()
ANALYZER = Analyzer(["english", "german"])
_HASH = HashEmbedder()
# Parsers whose text is the file's own text: offsets are offsets into the file.
VERBATIM = ["md", "txt", "rst", "py", "json", "yaml", "toml", "js", "go", "sh", "sql", "c"]
REWRITING = ["html", "csv", "tsv"]  # their text is derived; offsets map into that text
_BREAK = re.compile(r"\r\n|\r|\n")


class _Counter:
    def count(self, text: str) -> int:
        return _HASH.count_tokens(text)


_PIECES = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=40),  # anything but lone surrogates
    st.sampled_from(["# H", "\n", "\r", "\r\n", "\n\n", "---\n", "```\n", "\u2028", "\x0c", "\t",
                     "<p>", "</p>", "<h1>", "a,b\n", "\"q\"", "é", "e\u0301", "👩‍💻", "中文。", "مرحبا",
                     "x" * 90, "word " * 30, "def f():\n    pass\n", "  - item\n"]),
)  # fmt: skip
_DOCS = st.lists(_PIECES, max_size=30).map("".join)


def _line_of(text: str, pos: int) -> int:
    """1-based line of ``pos``, counted independently of LineIndex."""
    return len(_BREAK.findall(text[:pos])) + 1 - (1 if text[:pos].endswith("\r") and text[pos:pos + 1] == "\n"
                                                   else 0)  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_DOCS, st.sampled_from(VERBATIM + REWRITING), st.integers(min_value=16, max_value=80),
       st.integers(min_value=0, max_value=16))  # fmt: skip
def test_chunk_offsets_lines_and_terms_map_back_to_the_source(
    source: str, ext: str, max_tokens: int, overlap: int
) -> None:
    try:
        doc = REGISTRY.parse(source.encode("utf-8"), f"doc.{ext}")
    except ParseError:
        return  # refused with a reason (e.g. NUL, bad frontmatter): fine, never another exception
    if ext in VERBATIM:
        assert doc.text == source
    spans = chunk_document(doc, _Counter(), max_tokens, overlap, "auto")
    lines = LineIndex(doc.text)
    for span in spans:
        piece = doc.text[span.start : span.end]
        assert piece and piece == piece.strip()
        assert doc.body_start <= span.start < span.end <= len(doc.text)
        assert lines.line_of(span.start) == _line_of(doc.text, span.start)
        assert all(len(h) <= 200 for h in span.heading_path)
        for token in ANALYZER.tokens(piece):
            assert 0 <= token.start < token.end <= len(piece)
            assert piece[token.start : token.end].strip()
