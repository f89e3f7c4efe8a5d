"""Keyword analyzer: script-aware runs, NFKC casefolding, Snowball stems, CJK n-grams."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import Stemmer

from docshelf.analyze._scripts import G_LATIN, G_NUM, G_OTHER, TOKEN_RE
from docshelf.analyze.stopwords import DETECT_WORDS, HINT_CHARS, STOPWORDS

__all__ = ["ANALYZER_VERSION", "Analyzer", "Token"]

# Bump whenever the terms produced for some input change: the keyword index must be rebuilt.
ANALYZER_VERSION = 1

# Characters that extend the previous unit of a CJK run: (han)dakuten and Hangul
# medial/final jamo, which NFKC composes with the character before them.
_CONTINUATION = frozenset(
    "\u3099\u309a\uff9e\uff9f"
    + "".join(map(chr, range(0x1160, 0x1200)))
    + "".join(map(chr, range(0xD7B0, 0xD7FC)))
)
_EMPTY: frozenset[str] = frozenset()
# Longer letter/digit runs (base64, hex dumps) are skipped: nobody searches for them,
# and tantivy drops terms over 65,530 bytes anyway. Lucene's limit is 255 too.
_MAX_RUN = 255


@dataclass(frozen=True, slots=True)
class Token:
    """One term and the span ``text[start:end]`` of the original text it came from."""

    term: str
    start: int
    end: int


def _fold(raw: str) -> str:
    """NFKC + casefold (+ NFKC again, as casefolding can denormalise); one apostrophe."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", raw).casefold())
    return folded.replace("\u2019", "'")


def _cjk_units(raw: str, start: int) -> tuple[list[str], list[int]]:
    """Normalised characters of a CJK run and their len(units) + 1 boundaries in the text."""
    if unicodedata.is_normalized("NFKC", raw):
        return list(raw), list(range(start, start + len(raw) + 1))
    # Normalise per unit, not per run, so every unit keeps its own span ("ｶﾞ" -> "ガ").
    units: list[str] = []
    bounds: list[int] = []
    for i, ch in enumerate(raw):
        if units and ch in _CONTINUATION:
            units[-1] += ch
        else:
            units.append(ch)
            bounds.append(start + i)
    bounds.append(start + len(raw))
    return [unicodedata.normalize("NFKC", u) for u in units], bounds


class Analyzer:
    """Text -> keyword terms with offsets; the same code serves documents and queries.

    Language choice, measured as BM25 nDCG@10 on xquad-de / scifact (natural queries;
    keyword queries = the same with function words removed):
    - stems of all configured languages for every word: 0.930 / 0.663 (more terms, and
      the German stop list applied to English);
    - stems of the language detected per text: 0.945 / 0.690, but on keyword queries
      detection has no evidence and xquad-de falls to 0.880;
    - chosen: the detected language when the evidence is clear, otherwise stems of all
      languages minus the stop words common to all: 0.947 / 0.690, keyword 0.950 / 0.691.
    """

    def __init__(
        self,
        languages: Sequence[str] = ("english", "german"),
        stopwords: bool = True,
        extra_stopwords: Iterable[str] = (),
    ) -> None:
        langs = tuple(dict.fromkeys(lang.strip().lower() for lang in languages))
        if not langs:
            raise ValueError("Analyzer needs at least one language")
        unknown = [lang for lang in langs if lang not in Stemmer.algorithms()]
        if unknown:
            raise ValueError(f"no Snowball stemmer for {', '.join(unknown)}")
        self.languages: tuple[str, ...] = langs
        self.stopwords = stopwords
        self.extra_stopwords: frozenset[str] = frozenset(_fold(w) for w in extra_stopwords)
        self._stemmers = {lang: Stemmer.Stemmer(lang) for lang in langs}
        self._stop = {
            lang: (STOPWORDS.get(lang, _EMPTY) if stopwords else _EMPTY) | self.extra_stopwords
            for lang in langs
        }
        self._stop_common = frozenset.intersection(*self._stop.values())
        # A function word is evidence only if no other configured language has it.
        self._detect = {
            lang: DETECT_WORDS.get(lang, _EMPTY).difference(
                *(DETECT_WORDS.get(other, _EMPTY) for other in langs if other != lang)
            )
            for lang in langs
        }
        self._hints = {lang: HINT_CHARS.get(lang, "") for lang in langs}

    @property
    def fingerprint(self) -> str:
        """Short stable id of version + configuration; a change means: rebuild the index."""
        config = "\n".join(
            (
                str(ANALYZER_VERSION),
                ",".join(self.languages),
                str(self.stopwords),
                ",".join(sorted(self.extra_stopwords)),
            )
        )
        return f"a{ANALYZER_VERSION}-{hashlib.sha256(config.encode()).hexdigest()[:10]}"

    def tokens(self, text: str) -> list[Token]:
        """Terms in text order, each with its span in ``text``."""
        terms, starts, ends = self._analyze(text)
        return [Token(t, s, e) for t, s, e in zip(terms, starts, ends, strict=True)]

    def terms(self, text: str) -> list[str]:
        """``[t.term for t in self.tokens(text)]`` without building Token objects."""
        return self._analyze(text)[0]

    def detect_language(self, text: str) -> str:
        """Most likely of ``self.languages`` for ``text``; the first one when undecided."""
        words = [
            m.group().lower() if m.group().isascii() else _fold(m.group())
            for m in TOKEN_RE.finditer(text)
            if m.lastindex in (G_LATIN, G_OTHER)
        ]
        return self._scores(words)[0]

    def _scores(self, words: list[str]) -> tuple[str, int, int]:
        """(best language, its score, runner-up score); score = evidence word count."""
        best, best_score, second = self.languages[0], 0, 0
        for lang in self.languages:
            vocab, hints = self._detect[lang], self._hints[lang]
            score = 0
            for w in words:
                if w in vocab or (hints and not w.isascii() and any(c in hints for c in w)):
                    score += 1
            if score > best_score:
                best, best_score, second = lang, score, best_score
            elif score > second:
                second = score
        return best, best_score, second

    def _language(self, words: list[str]) -> str | None:
        """The text's language if the evidence is clear (>= 2 words, 2:1), else None."""
        if len(self.languages) == 1:
            return self.languages[0]
        best, best_score, second = self._scores(words)
        return best if best_score >= 2 and best_score >= 2 * second else None

    def _analyze(self, text: str) -> tuple[list[str], list[int], list[int]]:
        """Parallel lists (terms, starts, ends); alphabetic words are stemmed in place."""
        terms: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        words: list[int] = []  # indices of alphabetic terms, for stop words and stemming
        for m in TOKEN_RE.finditer(text):
            group = m.lastindex or 0  # never None: every alternative is a group
            raw = m.group()
            start, end = m.span()
            if end - start > _MAX_RUN and group <= G_NUM:
                continue
            if group in (G_LATIN, G_OTHER):
                # NFKC may turn one run into several pieces ("\ufc5e" -> " \u064c\u0651",
                # "①" -> "1"); they share the run's span and none may contain a space.
                for piece in [raw.lower()] if raw.isascii() else _fold(raw).split():
                    if not piece.isdecimal():
                        words.append(len(terms))
                    terms.append(piece)
                    starts.append(start)
                    ends.append(end)
            elif group == G_NUM:
                terms.append(raw if raw.isascii() else _fold(raw))
                starts.append(start)
                ends.append(end)
            else:
                # Han, kana, Hangul: unigrams + overlapping bigrams. Bigrams alone give
                # nDCG@10 0.967 / 0.981 on xquad-zh / cmrc2018; adding unigrams 0.968 /
                # 0.983, and a one-character query ("猫", Korean "집" before a particle)
                # then matches inside longer runs instead of only standing alone.
                units, bounds = _cjk_units(raw, start)
                for i, unit in enumerate(units):
                    terms.append(unit)
                    starts.append(bounds[i])
                    ends.append(bounds[i + 1])
                    if i + 1 < len(units):
                        terms.append(unit + units[i + 1])
                        starts.append(bounds[i])
                        ends.append(bounds[i + 2])
        if words:
            return self._stem(terms, starts, ends, words)
        return terms, starts, ends

    def _stem(
        self, terms: list[str], starts: list[int], ends: list[int], words: list[int]
    ) -> tuple[list[str], list[int], list[int]]:
        """Drop stop words and stem the alphabetic terms at indices ``words``."""
        lang = self._language([terms[i] for i in words])
        langs = (lang,) if lang is not None else self.languages
        stop = self._stop[lang] if lang is not None else self._stop_common
        keep = [i for i in words if terms[i] not in stop]
        surface = [terms[i] for i in keep]
        # stemWords on a whole list is PyStemmer's fastest path (C loop, internal cache).
        per_lang = [self._stemmers[lg].stemWords(surface) for lg in langs]
        if len(keep) == len(words) and len(per_lang) == 1:
            for i, stem in zip(keep, per_lang[0], strict=True):
                terms[i] = stem
            return terms, starts, ends
        stems: dict[int, list[str]] = {i: [] for i in words}  # stop words stay empty
        for j, i in enumerate(keep):
            variants = stems[i]
            for lang_stems in per_lang:
                if lang_stems[j] not in variants:
                    variants.append(lang_stems[j])
        out_t: list[str] = []
        out_s: list[int] = []
        out_e: list[int] = []
        for i, term in enumerate(terms):
            for t in stems.get(i, (term,)):
                out_t.append(t)
                out_s.append(starts[i])
                out_e.append(ends[i])
        return out_t, out_s, out_e
