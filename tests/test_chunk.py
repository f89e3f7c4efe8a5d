"""Chunking: the token budget is a hard limit, spans map to the text, nothing is lost."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.chunk import ApproxTokenCounter, LineIndex, TokenCounter, chunk_document, split_sentences
from docshelf.parse import MarkdownParser, TextParser
from docshelf.types import ChunkSpan, ParsedDocument, Section

COUNTER = ApproxTokenCounter()


def md(source: str) -> ParsedDocument:
    return MarkdownParser().parse(source.encode(), "doc.md")


def chunk_texts(doc: ParsedDocument, spans: list[ChunkSpan]) -> list[str]:
    return [doc.text[c.start : c.end] for c in spans]


class JoinPenaltyCounter:
    """Not additive: every blank line costs 3 tokens, as some tokenizers behave.

    Summing per-block counts underestimates joined chunks, so the chunker's
    final check with the counter is what keeps chunks within budget.
    """

    def count(self, text: str) -> int:
        return COUNTER.count(text) + 3 * text.count("\n\n")


def check_invariants(
    doc: ParsedDocument, spans: list[ChunkSpan], counter: TokenCounter, max_tokens: int
) -> None:
    text = doc.text
    covered = bytearray(len(text))
    prev: ChunkSpan | None = None
    for c in spans:
        piece = text[c.start : c.end]
        assert doc.body_start <= c.start < c.end <= len(text)
        assert piece == piece.strip() != ""
        n = counter.count(piece)
        assert n <= max_tokens and c.token_count == n
        if prev is not None:
            assert c.start >= prev.start and c.end > prev.end
        covered[c.start : c.end] = b"\1" * (c.end - c.start)
        prev = c
    lost = [i for i in range(doc.body_start, len(text)) if not covered[i] and not text[i].isspace()]
    assert lost == [], repr(text[lost[0] - 10 : lost[0] + 10])


# -- hard budget and coverage, for any input ---------------------------------------

_PIECES = st.one_of(
    st.sampled_from(
        [
            "# Title",
            "## Sub section",
            "### Deep ###",
            "Setext\n======",
            "```\n# not a heading\ncode()\n```",
            "- item one\n- item two",
            "| a | b |\n|---|---|\n| 1 | 2 |",
            "---",
            "e.g. Dr. Smith paid 3.5 dollars. Then he left! Why?",
            "这是一个中文句子。这是另一个句子！还有问题吗？",
            "中文没有标点也没有空格的长长的一段文字用来测试按字符切分的情况" * 3,
            "x" * 150,
            "https://example.com/a/very/long/url/that/has/no/spaces/at/all/" * 2,
            "e\u0301te\u0301 \U0001f469\u200d\U0001f4bb caf\u00e9",
        ]
    ),
    st.text(alphabet="ab c.\n\r\t#-中文。 ", max_size=80),
    st.lists(
        st.sampled_from(["word", "longerword", "中", "文", ".", " ", "\n", "\r\n", "# "]), max_size=60
    ).map("".join),
)
_SEPARATORS = st.sampled_from(["\n", "\n\n", "\r\n\r\n", " ", "\n\n\n", ""])


@st.composite
def markdownish(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(_PIECES, _SEPARATORS), max_size=25))
    body = "".join(piece + sep for piece, sep in parts)
    if draw(st.booleans()):
        return "---\ntitle: T\ntags: [a]\n---\n" + body
    # A leading "---" line would open frontmatter, which must then be valid YAML.
    return "\n" + body if body.startswith("---") else body


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    markdownish(),
    st.integers(min_value=4, max_value=60),
    st.integers(min_value=0, max_value=30),
    st.sampled_from(["auto", "headings"]),
    st.booleans(),
)
def test_every_span_is_exact_within_budget_and_covers_the_body(
    source: str, max_tokens: int, overlap: int, mode: str, penalised: bool
) -> None:
    doc = md(source)
    counter: TokenCounter = JoinPenaltyCounter() if penalised else COUNTER
    spans = chunk_document(
        doc, counter, max_tokens, overlap, mode="headings" if mode == "headings" else "auto"
    )
    check_invariants(doc, spans, counter, max_tokens)


def _prose(words: int, every: int, newline_every: int) -> str:
    """``words`` words, a sentence end after every ``every``-th, a line break after every
    ``newline_every``-th (0: none)."""
    vocab = ["word", "other", "longerword", "x", "data"]
    out = []
    for i in range(1, words + 1):
        out.append(vocab[i % len(vocab)] + ("." if every and i % every == 0 else ""))
        out.append("\n" if newline_every and i % newline_every == 0 else " ")
    return "".join(out).strip()


_PLAIN_PIECES = st.one_of(
    st.sampled_from(["Overview", "2.  New features", "a.  Many changes:", "Title line here", "b."]),
    st.builds(_prose, st.integers(0, 300), st.integers(0, 40), st.integers(0, 30)),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_PLAIN_PIECES, min_size=1, max_size=12).map("\n\n".join),
    st.integers(min_value=16, max_value=80),
)
def test_plain_text_has_no_fragment_but_its_last_chunk(text: str, max_tokens: int) -> None:
    # no headings and no pages: nothing forces a cut, so a chunk under a quarter of the budget
    # is left only at the end (a short line before a block that did not fit took the block's head)
    doc = TextParser().parse(text.encode(), "notes.txt")
    spans = chunk_document(doc, COUNTER, max_tokens)
    check_invariants(doc, spans, COUNTER, max_tokens)
    assert [c.token_count for c in spans[:-1] if c.token_count < max_tokens // 4] == []


# -- behaviour -------------------------------------------------------------------


def test_chinese_text_is_split_at_sentence_ends_within_budget() -> None:
    sentence = "这是第{}个句子，用来测试中文文本的分块效果。"
    body = "".join(sentence.format(i) for i in range(300))
    assert len(body) > 5000
    doc = md(body)
    spans = chunk_document(doc, COUNTER, 200)
    assert len(spans) >= 25  # ~6,600 one-character tokens into 200-token chunks
    check_invariants(doc, spans, COUNTER, 200)
    assert all(t.endswith("。") for t in chunk_texts(doc, spans))


def test_chinese_without_punctuation_splits_between_characters() -> None:
    doc = md("中" * 5000)
    spans = chunk_document(doc, COUNTER, 128)
    assert len(spans) == 40  # ceil(5000 / 128): measured in characters, not spaces
    check_invariants(doc, spans, COUNTER, 128)


def test_auto_mode_packs_blocks_and_starts_chunks_at_headings() -> None:
    doc = md("# A\n\none.\n\ntwo.\n\n## B\n\nthree.\n\n## C\n### D\n\nfour.\n")
    spans = chunk_document(doc, COUNTER, 100)
    assert chunk_texts(doc, spans) == ["# A\n\none.\n\ntwo.", "## B\n\nthree.", "## C\n### D\n\nfour."]
    assert [c.heading_path for c in spans] == [("A",), ("A", "B"), ("A", "C", "D")]


def test_headings_mode_gives_one_chunk_per_section() -> None:
    doc = md("intro\n\n# A\n\none.\n\ntwo.\n\n## B\n\nthree.\n\n## C\n### D\n\nfour.\n")
    spans = chunk_document(doc, COUNTER, 100, mode="headings")
    assert chunk_texts(doc, spans) == [
        "intro",
        "# A\n\none.\n\ntwo.",
        "## B\n\nthree.",
        "## C",
        "### D\n\nfour.",
    ]
    assert [c.heading_path for c in spans] == [(), ("A",), ("A", "B"), ("A", "C"), ("A", "C", "D")]


def test_headings_mode_still_splits_an_oversized_section() -> None:
    doc = md("# Big\n\n" + " ".join(f"Sentence number {i} is here." for i in range(60)))
    spans = chunk_document(doc, COUNTER, 40, mode="headings")
    assert len(spans) > 3 and all(c.heading_path == ("Big",) for c in spans)
    check_invariants(doc, spans, COUNTER, 40)


def test_overlap_repeats_whole_trailing_sentences_within_a_section_only() -> None:
    para = " ".join(f"Fact {i} holds." for i in range(40))
    doc = md(f"# One\n\n{para}\n\n# Two\n\n{para}\n")
    plain = chunk_document(doc, COUNTER, 30)
    spans = chunk_document(doc, COUNTER, 30, overlap_tokens=10)
    assert all(b.start >= a.end for a, b in itertools.pairwise(plain))
    overlapped = 0
    for prev, cur in itertools.pairwise(spans):
        same_section = cur.heading_path == prev.heading_path and not doc.text[cur.start :].startswith("#")
        if cur.start < prev.end:
            overlapped += 1
            assert same_section
            repeated = doc.text[cur.start : prev.end]
            assert repeated.startswith("Fact ") and repeated.endswith("holds.")  # whole sentences
            assert COUNTER.count(repeated) <= 10
    assert overlapped >= 12  # every continuation chunk, in both sections
    check_invariants(doc, spans, COUNTER, 30)


def test_oversized_code_block_splits_at_lines() -> None:
    code = "\n".join(f"value_{i} = compute({i})" for i in range(100))
    doc = md(f"```python\n{code}\n```\n")
    spans = chunk_document(doc, COUNTER, 50)
    assert len(spans) > 5
    check_invariants(doc, spans, COUNTER, 50)
    for t in chunk_texts(doc, spans)[1:-1]:
        assert t.startswith("value_") and t.endswith(")")


def test_frontmatter_is_never_chunked() -> None:
    doc = md("---\ntitle: Secret title\n---\nBody only.\n")
    assert chunk_texts(doc, chunk_document(doc, COUNTER, 50)) == ["Body only."]


def test_text_missed_by_the_parser_is_still_chunked_and_pages_carry_over() -> None:
    text = "page one text\n\nforgotten words\n\npage two text\n\ntail"
    doc = ParsedDocument(
        text=text,
        sections=[Section(0, 13, "paragraph", ("H",), page=1), Section(32, 45, "paragraph", ("H",), page=2)],
        file_type="pdf",
    )
    spans = chunk_document(doc, COUNTER, 5)
    assert chunk_texts(doc, spans) == ["page one text", "forgotten words", "page two text\n\ntail"]
    assert [c.page for c in spans] == [1, 1, 2]


def test_character_cuts_keep_combining_marks_and_emoji_whole() -> None:
    doc = md("e\u0301" * 60 + "\U0001f469\u200d\U0001f4bb" * 20)
    spans = chunk_document(doc, COUNTER, 7)
    check_invariants(doc, spans, COUNTER, 7)
    for c in spans:
        assert doc.text[c.start] not in "\u0301\u200d" and doc.text[c.start - 1] != "\u200d"


def test_bad_arguments_are_refused() -> None:
    doc = md("text")
    with pytest.raises(ValueError, match="max_tokens"):
        chunk_document(doc, COUNTER, 0)
    with pytest.raises(ValueError, match="overlap_tokens"):
        chunk_document(doc, COUNTER, 10, overlap_tokens=-1)


class MeteredCounter:
    """Counts how many characters the chunker asks to have counted: its real work."""

    def __init__(self) -> None:
        self.chars = 0

    def count(self, text: str) -> int:
        self.chars += len(text)
        return COUNTER.count(text)


def test_one_megabyte_of_markdown_chunks_in_linear_work() -> None:
    rng = random.Random(7)
    words = ["the", "index", "keeps", "local", "documents", "searchable", "e.g.", "by", "3.5", "score"]
    parts: list[str] = []
    while sum(map(len, parts)) < 1_000_000:
        r = rng.random()
        if r < 0.1:
            parts.append("## " + " ".join(rng.choices(words, k=3)))
        elif r < 0.2:
            parts.append("```\n" + "\n".join(f"# line {i}" for i in range(rng.randint(2, 60))) + "\n```")
        elif r < 0.25:
            parts.append("中文句子测试。" * rng.randint(5, 100))
        else:
            sentences = (
                " ".join(rng.choices(words, k=rng.randint(4, 30))) + "." for _ in range(rng.randint(1, 15))
            )
            parts.append(" ".join(sentences))
    doc = md("\n\n".join(parts))
    metered = MeteredCounter()
    spans = chunk_document(doc, metered, 256, overlap_tokens=32)
    # each character is counted a bounded number of times (blocks, packing, overlap, the final
    # check), never once per chunk or per split: quadratic work would be ~1,000x the text
    assert metered.chars < 12 * len(doc.text), metered.chars / len(doc.text)
    assert max(c.token_count for c in spans) <= 256


# -- helpers: sentences, token counting, line numbers --------------------------------


def test_sentences_respect_abbreviations_numbers_and_cjk() -> None:
    text = "See e.g. Dr. Who at 3.5 km. J. R. R. Tolkien wrote it! Really?\n\nNew para 第一句。第二句！"
    got = [text[s:e] for s, e in split_sentences(text)]
    assert got == [
        "See e.g. Dr. Who at 3.5 km.",
        "J. R. R. Tolkien wrote it!",
        "Really?",
        "New para 第一句。",
        "第二句！",
    ]


def test_a_list_label_that_opens_its_line_is_not_a_sentence() -> None:
    # a plain-text changelog (bash's NEWS): "a." alone was a sentence, and became a chunk of its own
    text = (
        "2.  New Features in Readline\n\na.  Many changes to the signal handling:\n"
        "        o Readline now catches SIGQUIT\nb. Another change. And more.\n"
        "iv. Fourth item here. Then use option c. Next one."
    )
    got = [text[s:e] for s, e in split_sentences(text)]
    assert got == [
        "2.  New Features in Readline",
        "a.  Many changes to the signal handling:\n        o Readline now catches SIGQUIT\n"
        "b. Another change.",
        "And more.",
        "iv. Fourth item here.",
        "Then use option c.",
        "Next one.",
    ]


def test_approx_counter() -> None:
    assert COUNTER.count("") == 0
    assert COUNTER.count("中文한국어カナ") == 7  # one per CJK, Hangul or kana character
    assert COUNTER.count("tokenizer") == 3  # ceil(9 / 4)
    assert COUNTER.count("a, b!") == 4
    assert COUNTER.count("-" * 40) == 10  # rule lines are not 40 tokens


_NEWLINE_TEXT = st.lists(
    st.sampled_from(["a", "bc", "中", " ", "\n", "\r\n", "\r", "\n\n"]), max_size=40
).map("".join)


@given(_NEWLINE_TEXT)
def test_line_index_agrees_with_splitlines(text: str) -> None:
    index = LineIndex(text)
    lines = text.splitlines(keepends=True)
    assert index.line_count == len(lines)
    offset = 0
    for number, line in enumerate(lines, start=1):
        assert index.line_start(number) == offset
        for i in range(offset, offset + len(line)):
            assert index.line_of(i) == number
        offset += len(line)
    assert index.line_of(len(text)) == (len(lines) + (1 if text.endswith(("\n", "\r")) else 0) or 1)


def test_line_of_crlf_text_and_past_its_end() -> None:
    text = "one\r\ntwo\r\nthree\r\n"
    index = LineIndex(text)
    assert index.line_of(text.index("three") + 4) == 3
    assert index.line_of(text.index("two") + 4) == 2  # the newline of "two\r\n" is on its line
    with pytest.raises(ValueError):
        index.line_of(len(text) + 1)


def test_a_chunk_never_spans_a_page_break() -> None:
    """Small pages that would fit one chunk still split at the break, so page citations hold."""
    pages = ["alpha beta gamma", "delta epsilon", "zeta eta theta"]
    text = "\n\n".join(pages)
    sections, pos = [], 0
    for n, p in enumerate(pages, start=1):
        sections.append(Section(pos, pos + len(p), "paragraph", (), page=n))
        pos += len(p) + 2
    doc = ParsedDocument(text=text, sections=sections, file_type="pdf")
    spans = chunk_document(doc, COUNTER, 200, overlap_tokens=0)
    assert [(chunk_texts(doc, [s])[0], s.page) for s in spans] == [(p, n) for n, p in enumerate(pages, 1)]


def _json_like(lines: int) -> ParsedDocument:
    """One code block of short lines with a line over the budget now and then, as a big JSON file."""
    rnd = random.Random(7)
    rows = [
        " ".join(f"word{rnd.randrange(10**6)}" for _ in range(700))
        if i % 40 == 39
        else f'  "key{i}": "value {rnd.randrange(10**6)}",'
        for i in range(lines)
    ]
    text = "\n".join(rows)
    return ParsedDocument(text=text, sections=[Section(0, len(text), "code", ())], file_type="json")


def test_chunking_counts_each_part_of_a_big_block_a_bounded_number_of_times() -> None:
    """/usr/share/doc/nodejs/api/all.json (7 MB, one block of 99,579 lines) hit parse.timeout_s
    (300 s): each short chunk before a long line had the whole rest of the block cut again, so the
    text counted grew with the square of its size (400 KB: 5 s, 800 KB: 23 s)."""
    per_char = []
    for lines in (1000, 4000):
        doc, tally = _json_like(lines), MeteredCounter()
        spans = chunk_document(doc, tally, 512, 64)
        check_invariants(doc, spans, COUNTER, 512)
        per_char.append(tally.chars / len(doc.text))
    assert per_char[1] < 1.25 * per_char[0], per_char  # linear: the same share at four times the size
