"""A block with no sentence ends is split at words without holding a copy of every word's span."""

from __future__ import annotations

import itertools
import random
import tracemalloc

import pytest

from docshelf.chunk import ApproxTokenCounter, chunk_document
from docshelf.types import ParsedDocument, Section

COUNTER = ApproxTokenCounter()


def _one_line(words: int, seed: int = 3) -> str:
    rng = random.Random(seed)
    vocab = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(1, 12))) for _ in range(5000)]
    return " ".join(rng.choices(vocab, k=words))


@pytest.mark.slow  # ~6 s: chunking 2 MB under tracemalloc, which slows every allocation
def test_a_megabytes_long_line_is_chunked_in_memory_a_small_multiple_of_its_size() -> None:
    # the trial's 45 MB single-line file peaked at 1.5 GB: (start, end) tuples for every word
    text = _one_line(300_000)  # ~2 MB, no sentence end anywhere
    doc = ParsedDocument(text=text, sections=[Section(0, len(text), "paragraph")], file_type="text")
    tracemalloc.start()
    try:
        spans = chunk_document(doc, COUNTER, 256)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * len(text), f"{peak / len(text):.1f} bytes per character of text"
    assert spans[0].start == 0 and spans[-1].end == len(text)
    for before, after in itertools.pairwise(spans):
        assert text[before.end : after.start].isspace()  # every word in one chunk


def test_pieces_cut_at_words_are_the_longest_that_fit() -> None:
    text = _one_line(20_000, seed=5)
    doc = ParsedDocument(text=text, sections=[Section(0, len(text), "paragraph")], file_type="text")
    spans = chunk_document(doc, COUNTER, 64)
    for span, following in itertools.pairwise(spans):
        assert span.token_count <= 64
        next_word_end = text.find(" ", following.start)
        next_word_end = len(text) if next_word_end < 0 else next_word_end
        assert COUNTER.count(text[span.start : next_word_end]) > 64  # one more word would not fit
