"""grep's matching engine: a literal or regular expression, compiled for RE2 (linear time, so no
pattern can take exponential time on a long line), the pieces of it that every match contains
(what the stores' substring indexes look up), and its matches in a document's text.

Document text is rebuilt from the stored chunks at their offsets (``stitch``): overlapping
chunks give each place once, and a match that crosses a chunk boundary is found like any other.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from docshelf.errors import DocshelfError

__all__ = ["Found", "GrepPattern", "Spanned", "compile_pattern", "is_word_char", "stitch"]

MAX_PATTERN_CHARS = 1000
MIN_PIECE = 3  # the substring indexes hold trigrams: shorter pieces cannot be looked up
# what a blank in a literal phrase matches: any run of spaces and line breaks, so a phrase that a
# PDF or Word line wraps is still found (RE2's \s is ASCII only, \p{Z} adds no-break spaces)
_GAP = r"[\s\p{Z}]+"
# letters whose case-insensitive matches the indexes may fold otherwise than RE2: ſ/s, K (Kelvin)/k,
# ß/ẞ, final sigma, dotted/dotless i ... a piece is cut at them (the match is still checked on the text)
_ODD_CASE = frozenset("ſKÅßẞςϐϑϕϖϰϱϵẛιΐΰİı")


def is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _plain_case(ch: str) -> bool:
    """True when a case-insensitive index and RE2 surely agree on ``ch``: ASCII, caseless, or a
    letter with one lower and one upper form that map to each other."""
    if ch.isascii() or ch.lower() == ch.upper():
        return True
    if ch in _ODD_CASE:
        return False
    low, up = ch.lower(), ch.upper()
    return len(low) == 1 and len(up) == 1 and low.upper() == up and up.lower() == low


def _split_pieces(text: str) -> list[str]:
    """``text`` cut at blanks and at letters of uncertain case: the parts an index can look up."""
    out: list[str] = []
    for word in text.split():
        current: list[str] = []
        for ch in word:
            if _plain_case(ch):
                current.append(ch)
            else:
                out.append("".join(current))
                current = []
        out.append("".join(current))
    return [p for p in out if len(p) >= MIN_PIECE]


@dataclass(frozen=True)
class Found:
    """One match: its span in the document text."""

    start: int
    end: int


@dataclass(frozen=True)
class GrepPattern:
    """A compiled grep pattern and the pieces (3+ characters, no blanks) every match contains."""

    source: str
    regex: bool
    ignore_case: bool
    word: bool
    pieces: tuple[str, ...]
    compiled: Any  # an re2 pattern

    def matches(self, text: str) -> bool:
        """Whether ``text`` has any match at all (one pass, for a quick look at many documents joined:
        a document that matches alone matches among others)."""
        return self.compiled.search(text) is not None

    def find(self, text: str) -> Iterator[Found]:
        """Non-empty matches in ``text``, left to right, without overlaps; with ``word`` only those
        with no letter, digit or underscore right before or after them."""
        if not self.word:  # one pass (each search call would encode the text again)
            for m in self.compiled.finditer(text):
                if m.end() > m.start():  # an empty match (``^``, ``a*``) says nothing to show
                    yield Found(m.start(), m.end())
            return
        pos = 0
        n = len(text)
        while pos <= n:
            m = self.compiled.search(text, pos)
            if m is None:
                return
            start, end = m.span()
            if end == start:  # an empty match (``^``, ``a*``) says nothing to show
                pos = start + 1
                continue
            if self.word and (
                (start > 0 and is_word_char(text[start - 1])) or (end < n and is_word_char(text[end]))
            ):
                pos = start + 1
                continue
            yield Found(start, end)
            pos = end


def _refused(pattern: str, why: str) -> DocshelfError:
    return DocshelfError(f"grep refused the pattern {pattern!r}: {why}")


def _regex_pieces(pattern: str) -> list[str]:
    """Literal runs that every match of ``pattern`` contains, read from Python's parse of it (RE2's
    syntax is close enough: what it cannot read gives no pieces, and the search scans)."""
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found,unused-ignore]

        parsed = sre_parse.parse(pattern)
    except Exception:
        return []
    runs: list[str] = []

    def walk(items: Any) -> None:
        current: list[str] = []
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                current.append(chr(arg))
                continue
            runs.append("".join(current))
            current = []
            if name == "SUBPATTERN":
                walk(arg[-1])  # a group that must match: its literals count
            elif name in ("MAX_REPEAT", "MIN_REPEAT") and arg[0] >= 1:
                walk(arg[2])  # at least once: its literals occur (as separate runs)
        runs.append("".join(current))

    walk(parsed)
    return [p for run in runs for p in _split_pieces(run)]


def compile_pattern(
    pattern: str, *, regex: bool = False, ignore_case: bool = True, word: bool = False
) -> GrepPattern:
    """A literal phrase (blanks match any run of blanks or line breaks) or an RE2 regular expression
    (``^`` and ``$`` anchor lines, as in grep). Refused with one sentence: an empty or overlong
    pattern, and what RE2 cannot run in linear time (back-references, look-around)."""
    import re2

    if not pattern.strip():
        raise DocshelfError("grep needs a pattern: a phrase, or a regular expression with regex on")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise _refused(pattern[:40] + "...", f"it is longer than {MAX_PATTERN_CHARS} characters")
    options = re2.Options()
    options.log_errors = False  # RE2 would print each refused pattern on stderr
    options.case_sensitive = not ignore_case
    options.max_mem = 64 << 20
    if regex:
        source = f"(?m){pattern}"
        pieces = _regex_pieces(pattern)
    else:
        words = pattern.split()
        source = _GAP.join(re2.escape(w) for w in words)
        pieces = _split_pieces(pattern)
    try:
        compiled = re2.compile(source, options)
    except re2.error as exc:
        detail = (
            exc.args[0].decode("utf-8", "replace")
            if exc.args and isinstance(exc.args[0], bytes)
            else str(exc)
        )
        if "escape sequence" in detail or "perl operator" in detail:
            why = (
                "back-references and look-arounds are not supported (they can take exponential time); "
                "rewrite it without them"
            )
        elif "too large" in detail or "too big" in detail:
            why = "it compiles to more than grep runs (a smaller repetition count will do)"
        else:
            why = f"it is not a valid regular expression ({detail}); pass regex off to match it literally"
        raise _refused(pattern, why) from None
    # the longest first: the rarest, usually, so the indexes narrow fastest
    unique = sorted(dict.fromkeys(pieces), key=len, reverse=True)
    return GrepPattern(pattern, regex, ignore_case, word, tuple(unique), compiled)


class Spanned(Protocol):
    """A chunk's text and place: a Chunk, or the TextSpan a store reads for grep."""

    @property
    def char_start(self) -> int: ...
    @property
    def char_end(self) -> int: ...
    @property
    def line_start(self) -> int: ...
    @property
    def line_end(self) -> int: ...
    @property
    def text(self) -> str: ...


def stitch(chunks: Sequence[Spanned]) -> str:
    """A document's text rebuilt from its stored chunks at their offsets. What no chunk holds (front
    matter, blank lines between sections) is blank, with as many line breaks as the chunks' line
    numbers say, so line numbers are those the chunks cite."""
    ordered = sorted(chunks, key=lambda c: (c.char_start, -c.char_end))
    parts: list[str] = []
    pos = breaks = 0  # text placed so far ends at ``pos`` and holds ``breaks`` line breaks
    for c in ordered:
        if c.char_end <= pos:
            continue  # inside what is placed already (overlap)
        if c.char_start > pos:  # a gap: blanks, its line breaks at its end, right before the chunk
            gap = c.char_start - pos
            n = max(0, min(c.line_start - 1 - breaks, gap))
            parts.append(" " * (gap - n) + "\n" * n)
            breaks += n
            pos = c.char_start
        parts.append(c.text[pos - c.char_start :])
        breaks = max(breaks, c.line_end - 1)  # a chunk ends on its last line (trimmed: no break after)
        pos = c.char_start + len(c.text)
    return "".join(parts)
