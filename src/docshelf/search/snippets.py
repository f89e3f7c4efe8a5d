"""Snippets: the best window of a passage with the query's words in **bold**, and match offsets.

The model quotes snippets, so they must not corrupt the Markdown they come from: no marker is put
inside an existing emphasis or code span (`- **SEV-1**: x` stays as written, never
`****SEV**-**1****`), neighbouring pieces of one word (`SEV-1`, the bigrams of a CJK word) are
one highlight, and a lone CJK character counts only when the query itself is one character.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from typing import Protocol

__all__ = ["Snippet", "heading_line_end", "highlights", "make_snippet", "protected_spans"]

Span = tuple[int, int]

_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_STRONG = re.compile(r"(\*\*|__)(?=\S)(?:(?!\1).)+?(?<=\S)\1", re.S)
_EM = re.compile(r"(?<![*\w])([*_])(?=[^\s*_])[^\n]+?(?<=[^\s*_])\1(?![*\w])")
_JOINERS = frozenset("-./:'’+#@")  # a word's inner punctuation: "SEV-1", "v2.3", "don't"


class _Token(Protocol):
    @property
    def term(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


def _cjk(ch: str) -> bool:
    """Whether ``ch`` is a Han, kana or Hangul character (matched by characters and bigrams)."""
    o = ord(ch)
    return 0x2E80 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x3FFFF


def protected_spans(text: str) -> list[Span]:
    """Code spans and emphasis already in ``text`` (no marker goes inside them)."""
    spans = [m.span() for m in _CODE.finditer(text)]
    for pattern in (_STRONG, _EM):
        spans += [m.span() for m in pattern.finditer(text) if not _inside(m.span(), spans)]
    return sorted(spans)


def _inside(span: Span, spans: Sequence[Span]) -> bool:
    """Whether ``span`` overlaps one of ``spans``."""
    return any(s < span[1] and span[0] < e for s, e in spans)


def highlights(tokens: Sequence[_Token], text: str, query_terms: set[str]) -> list[Span]:
    """Character spans of ``text`` that match the query, pieces of one word merged."""
    cjk_pairs = any(len(t) == 2 and all(map(_cjk, t)) for t in query_terms)
    found = [(t.start, t.end) for t in tokens if t.term in query_terms]
    pairs = [
        (t.start, t.end) for t in tokens if t.term in query_terms and len(t.term) == 2 and _cjk(t.term[0])
    ]
    spans: list[Span] = []
    for start, end in sorted(set(found)):
        lone_cjk = end - start == 1 and _cjk(text[start])
        if lone_cjk and cjk_pairs and not any(s <= start and end <= e for s, e in pairs):
            continue  # one character of a longer query word: noise, not a match
        if spans and (start <= spans[-1][1] or _joined(text, spans[-1][1], start)):
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans


def _joined(text: str, end: int, start: int) -> bool:
    """Whether two matches are pieces of one word, one or two joiners apart (`SEV-1`, `v2.3`):
    one highlight for the word, not a bold marker per piece."""
    gap = text[end:start]
    return 0 < len(gap) <= 2 and all(c in _JOINERS for c in gap)


class Snippet:
    """The window text (with **markers**), the match spans of the whole passage, where the
    window lies in it (start, end) and whether text was left out before and after it (``cut``:
    the "…" that ``text`` then begins or ends with, told apart from one of the passage's own)."""

    def __init__(self, text: str, spans: list[Span], window: Span, cut: tuple[bool, bool]) -> None:
        self.text = text
        self.spans = spans
        self.window = window
        self.cut = cut


def heading_line_end(text: str, heading: str | None) -> int:
    """Where the passage's text starts after a first line that only repeats its heading (0 if none):
    the hit carries the heading already, so the snippet's characters go to the text."""
    if not heading:
        return 0
    first, _, rest = text.partition("\n")
    if first.strip().lstrip("#").strip() != heading.strip():
        return 0
    under, _, after = rest.lstrip("\n").partition("\n")
    if len(set(under.strip())) == 1 and under.strip()[0] in "=-~^\"'`*+#":  # reStructuredText underline
        rest = after
    if not rest.strip():
        return 0
    return len(text) - len(rest.lstrip())


def make_snippet(
    tokens: Sequence[_Token], text: str, query_terms: set[str], width: int = 240, skip: int = 0,
    lines: bool = False,
) -> Snippet:  # fmt: skip
    """The window of ``text`` with the most matches, matches in **bold** where that is safe;
    it starts at ``skip`` or later (see heading_line_end). ``lines`` (code): whole lines, as
    they are laid out (see _as_lines), rather than the window's words on one line."""
    spans = highlights(tokens, text, query_terms)
    if len(text) - skip <= width or not spans:
        start = skip
    else:
        best, best_count = spans[0][0], 0
        starts = [s for s, _ in spans]  # increasing: the spans are merged and sorted
        for i, s in enumerate(starts):
            if s < skip:
                continue
            count = bisect_left(starts, s + width, i) - i  # matches starting in [s, s + width)
            if count > best_count:
                best, best_count = s, count
        start = max(skip, min(best - width // 4, len(text) - width))
    end = min(len(text), start + width)
    if lines:
        start, end = _line_bounds(text, start, end, skip, spans)
    else:
        start, end = _between_words(text, start, end, skip)
    keep_out = protected_spans(text)
    out, pos = [], start
    for s, e in spans:
        if s < start or e > end or _inside((s, e), keep_out):
            continue
        if text[s - 1 : s] in ("*", "_") or text[e : e + 1] in ("*", "_"):
            continue  # touching a marker character: bold there would read as different emphasis
        out += [text[pos:s], "**", text[s:e], "**"]
        pos = e
    out.append(text[pos:end])
    if lines:
        cut_before = start > skip and text[start - 1] != "\n"
        cut_after = end < len(text) and text[end] != "\n"
        shown = _as_lines("".join(out))
        marked = ("…" if cut_before else "") + shown + ("…" if cut_after else "")
        return Snippet(marked, spans, (start, end), (cut_before, cut_after))
    body = " ".join("".join(out).split())
    cut = (bool(text[skip:start].strip()), bool(text[end:].strip()))
    return Snippet(("…" if cut[0] else "") + body + ("…" if cut[1] else ""), spans, (start, end), cut)


_WORD_REACH = 20  # characters a prose window grows by, either side, to end between words


def _between_words(text: str, start: int, end: int, skip: int) -> tuple[int, int]:
    """The window widened to the blanks around its first and last words: a word cut in two reads
    as a typo or another word. Text without blanks (Chinese, Japanese) keeps its cut."""
    if start > skip and not text[start - 1].isspace():
        blanks = [i for i in range(max(skip, start - _WORD_REACH), start) if text[i].isspace()]
        start = blanks[-1] + 1 if blanks else start
    if end < len(text) and not text[end].isspace():
        blanks = [i for i in range(end, min(len(text), end + _WORD_REACH)) if text[i].isspace()]
        end = blanks[0] if blanks else end
    return start, end


_LINE_REACH = 80  # characters a code window grows by, either side, to take in a whole line


def _line_bounds(text: str, start: int, end: int, skip: int, spans: Sequence[Span]) -> tuple[int, int]:
    """The window widened to the start of its first line and the end of its last; a line too
    long for that is left out where the window holds more lines and no match is in its part,
    else cut."""
    first = text.rfind("\n", 0, start) + 1
    if first < skip and not text[first:skip].isspace():
        first = skip  # never back into the heading line the hit carries
    if start - first <= _LINE_REACH:
        start = first
    elif (after := text.find("\n", start, end)) >= 0 and not _inside((start, after), spans):
        start = after + 1
    last = text.find("\n", end)
    last = len(text) if last < 0 else last
    if last - end <= _LINE_REACH:
        end = last
    elif (before := text.rfind("\n", start, end)) > start and not _inside((before, end), spans):
        end = before
    while start < end and text[start] == "\n":  # blank lines at either end show nothing
        start += 1
    while end > start and text[end - 1] == "\n":
        end -= 1
    return start, end


def _as_lines(window: str) -> str:
    """Code's lines kept, with their indentation relative to the least indented one; blank lines
    and trailing blanks go (a snippet is for telling whether the hit is the one)."""
    rows = [row.rstrip() for row in window.split("\n")]
    rows = [row for row in rows if row]
    indent = min((len(row) - len(row.lstrip()) for row in rows), default=0)
    return "\n".join(row[indent:] for row in rows)
