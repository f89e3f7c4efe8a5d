"""Chunks cite the page their text is on; headings never stand alone; MkDocs attrs leave titles."""

from __future__ import annotations

import itertools

from docshelf.chunk import ApproxTokenCounter, chunk_document
from docshelf.parse import MarkdownParser, TextParser
from docshelf.parse.pdf import PdfParser
from docshelf.types import ParsedDocument, Section
from test_formats import make_pdf

COUNTER = ApproxTokenCounter()


def _page_lines(page: int) -> list[str]:
    # pages of different lengths, so some end with a chunk of several sentences
    return [f"See topic{page}x{i} here." for i in range(25 + 2 * page)]


def test_every_chunk_of_a_multipage_pdf_is_on_its_cited_page() -> None:
    pages = [_page_lines(p) for p in range(1, 6)]
    doc = PdfParser().parse(make_pdf(pages), "report.pdf")
    spans = chunk_document(doc, COUNTER, 40, overlap_tokens=20)
    assert len(spans) > 10
    overlapped = 0
    for span in spans:
        text = doc.text[span.start : span.end]
        assert span.page is not None
        words = [w for w in text.split() if w.startswith("topic")]
        assert words, text
        # the words name their page: topic3x7 is on page 3
        assert {w.split("x")[0] for w in words} == {f"topic{span.page}"}, (span.page, text)
    for a, b in itertools.pairwise(spans):
        overlapped += a.page == b.page and b.start < a.end
    assert overlapped > 0  # overlap still works within a page


def test_overlap_does_not_cross_a_page_break_between_sections_of_one_heading() -> None:
    text = "First page one. First page two. First page three.\n\nSecond page one. Second page two."
    cut = text.index("\n\n")
    sections = [
        Section(0, cut, "paragraph", ("H",), page=1),
        Section(cut + 2, len(text), "paragraph", ("H",), page=2),
    ]
    doc = ParsedDocument(text, sections, "pdf")
    spans = chunk_document(doc, COUNTER, 12, overlap_tokens=8)
    for span in spans:
        chunk = text[span.start : span.end]
        assert ("First" in chunk) != ("Second" in chunk)
        assert span.page == (1 if "First" in chunk else 2)


def test_a_heading_is_merged_into_the_text_after_it_not_left_alone() -> None:
    # a paragraph that alone nearly fills a chunk, so the heading before it does not fit with it
    paragraph = " ".join(f"Step {i} runs the deployment." for i in range(8))
    assert 56 <= COUNTER.count(paragraph) <= 64
    source = f"# Deploy guide\n\n{paragraph}\n\n## Rollback\n\n{paragraph}\n"
    doc = MarkdownParser().parse(source.encode(), "guide.md")
    spans = chunk_document(doc, COUNTER, 64, overlap_tokens=0)
    texts = [doc.text[s.start : s.end] for s in spans]
    assert not any(t.strip() in ("# Deploy guide", "## Rollback") for t in texts), texts
    first = next(t for t in texts if t.startswith("# Deploy guide"))
    assert "Step 0 runs" in first
    assert all(s.token_count <= 64 for s in spans)
    joined = " ".join(texts)
    assert all(f"Step {i} runs" in joined for i in range(8))  # nothing is lost


def test_mkdocs_attribute_lists_leave_headings_and_titles() -> None:
    source = "# Deploy guide { #deploy }\n\nIntro.\n\n## Roll back {: #rollback .wide }\n\nText.\n"
    doc = MarkdownParser().parse(source.encode(), "guide.md")
    assert doc.title == "Deploy guide"
    paths = {s.heading_path for s in doc.sections}
    assert ("Deploy guide", "Roll back") in paths
    assert not any("{" in h for p in paths for h in p)
    # braces that are not an attribute list stay
    kept = MarkdownParser().parse(b"# Sets {a, b}\n\nx\n", "s.md")
    assert kept.title == "Sets {a, b}"


def _words(n: int, seed: int = 1) -> str:
    vocab = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda", "sigma"]
    return " ".join(vocab[(i * 7 + seed * 3 + i // 5) % len(vocab)] for i in range(n))


def _fragments(doc: ParsedDocument, max_tokens: int, overlap: int = 0) -> list[str]:
    """Chunks under a quarter of the budget that are not the document's last."""
    spans = chunk_document(doc, COUNTER, max_tokens, overlap_tokens=overlap)
    texts = [doc.text[s.start : s.end] for s in spans]
    joined = " ".join(texts)
    assert all(w in joined for w in doc.text.split())  # nothing is lost
    return [t for s, t in zip(spans[:-1], texts[:-1], strict=True) if s.token_count < max_tokens // 4]


def test_a_short_paragraph_before_a_long_one_joins_its_head_not_left_alone() -> None:
    # plain text has no headings: a title line before a paragraph too long for one chunk stood alone
    paragraph = _words(300)
    text = f"Overview of the thing\n\n{paragraph}\n"
    doc = TextParser().parse(text.encode(), "notes.txt")
    for overlap in (0, 8):
        assert _fragments(doc, 64, overlap) == []
        first = doc.text[chunk_document(doc, COUNTER, 64, overlap_tokens=overlap)[0].start :]
        assert first.startswith("Overview of the thing\n\n" + paragraph[:40])


def test_a_short_paragraph_before_a_paragraph_that_does_not_fit_takes_its_first_sentences() -> None:
    paragraph = " ".join(f"Step {i} runs the deployment." for i in range(8))
    assert 56 <= COUNTER.count(paragraph) <= 64
    doc = TextParser().parse(f"Deploy notes\n\n{paragraph}\n\nAfter\n\n{paragraph}\n".encode(), "n.txt")
    assert _fragments(doc, 64) == []


def test_a_heading_joined_to_a_long_unspaced_paragraph_leaves_no_remnant() -> None:
    # the heading took the head of the paragraph's first piece, and the rest of that piece was left
    # alone between it and the next piece (10 tokens of 256 on a real file)
    doc = MarkdownParser().parse(f"# Title\n\n{_words(600)}\n".encode(), "t.md")
    assert _fragments(doc, 64) == []
