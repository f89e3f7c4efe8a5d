"""Keyword analyzer: script-aware runs, NFKC casefolding, Snowball stems per language, n-grams."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import Stemmer

from docshelf.analyze._cjk import cjk_terms
from docshelf.analyze._fold import fold, unaccented
from docshelf.analyze._scripts import (
    COMPOUND_RE,
    G_HANGUL,
    G_LATIN,
    G_NUM,
    G_OTHER,
    G_SEA,
    HYPHENATED_RE,
    SUFFIXED_RE,
    TOKEN_RE,
)
from docshelf.analyze.compounds import MIN_LENGTH, split_compound
from docshelf.analyze.compounds import available as compounds_available
from docshelf.analyze.languages import LANGUAGE_SCRIPT, SCRIPT_DEFAULT, SNOWBALL, LanguageVote, script_of_word
from docshelf.analyze.segment import segment
from docshelf.analyze.stopwords import CJK_STOPWORDS, HINT_CHARS, STOPWORDS
from docshelf.analyze.tagalog import TagalogStemmer
from docshelf.types import contextual_text

if TYPE_CHECKING:
    from docshelf.config import AnalyzeSettings

__all__ = ["ANALYZER_VERSION", "Analyzer", "Token"]

# Bump whenever the terms produced for some input change: the keyword index must be rebuilt.
# 2: per-script language vote over every Snowball language, ICU words for Thai/Lao/Khmer/
#    Myanmar, Hangul words + bigrams, whole identifiers/versions and CamelCase parts.
# 3: Chinese function characters and question words as stop words (CJK unigrams/bigrams).
# 4: Tagalog words (the vote's "tl") keep their form and add the stem of tagalog.py.
# 5: the second vote (configured languages) does not decide against a clear leader, and
#    undecided words also get the leader's stems.
# 6: a short German stop list (36 words, like the English one) instead of Snowball's 230.
# 7: the capital dotted I (U+0130) folds to a plain i, not i + U+0307; soft hyphens and other
#    joiners no longer split a word, Hebrew points are dropped, and C++ / C# / F# are terms.
# 8: a passage's accented Latin words also get the stems of their unaccented spelling.
# 9: a passage's hyphenated Latin words also get their closed spelling ("up-regulated": "upregul").
# 10: undecided words no longer get the stems of the vote's leader (5's second rule; issue 44).
# 11: no second vote among the configured languages (5's first rule; issue 44).
ANALYZER_VERSION = 11

_EMPTY: frozenset[str] = frozenset()
# Longer letter/digit runs (base64, hex dumps) are skipped: nobody searches for them,
# and tantivy drops terms over 65,530 bytes anyway. Lucene's limit is 255 too.
_MAX_RUN = 255
_MAX_COMPOUND = 64
# CamelCase / mixedCase boundaries: "getHTTPResponse" -> get, HTTP, Response.
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_HAS_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_ISO = {name: code for code, name in SNOWBALL.items()}
# Languages Snowball lacks that have a stemmer of ours (ISO code -> name in ``_stemmer``).
# bible-tl dev keyword nDCG@10: 0.8529 unstemmed, 0.8758 stems alone, 0.8943 stems + words;
# its questions cut to their three longest words: 0.2870, 0.0220, 0.2928.
_OWN_STEMMERS = {"tl": "tagalog"}


@dataclass(frozen=True, slots=True)
class Token:
    """One term and the span ``text[start:end]`` of the original text it came from."""

    term: str
    start: int
    end: int


class _Out:
    """Parallel term/start/end lists, plus the indices of the words to stem, by script."""

    __slots__ = ("ends", "starts", "terms", "words")

    def __init__(self) -> None:
        self.terms: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.words: dict[str, list[int]] = {}

    def add(self, term: str, start: int, end: int, script: str | None = None) -> None:
        """One term and its span; a word of ``script`` is stemmed later, in that script's language."""
        if script is not None:
            self.words.setdefault(script, []).append(len(self.terms))
        self.terms.append(term)
        self.starts.append(start)
        self.ends.append(end)


class Analyzer:
    """Text -> keyword terms with offsets; the same code serves documents and queries.

    Words are stemmed in the language their script and stop words point to, decided per
    text (a chunk, or a query) and per script, so a Russian chunk quoting English gets both
    stemmers. When the evidence is thin (a keyword query), Latin words get the stems of all
    ``languages`` (measured on xquad-de / scifact: detected language 0.945 / 0.690, all
    stems 0.930 / 0.663, this rule 0.947 / 0.690; keyword queries 0.950 / 0.691).
    ``detect=False`` restricts the choice to ``languages``.
    """

    def __init__(
        self,
        languages: Sequence[str] = ("english", "german"),
        stopwords: bool = True,
        extra_stopwords: Iterable[str] = (),
        detect: bool = True,
        decompound: bool = True,
        unaccented: bool = True,
    ) -> None:
        """``languages``: the stems an undecided Latin text gets; ``stopwords``: drop the short stop
        lists (English, German, CJK); ``detect``: vote among every language, not ``languages`` only;
        ``decompound``: German compounds also under their parts (with wordfreq installed);
        ``unaccented``: a passage's accented words also under their plain spelling."""
        extra_stopwords = tuple(extra_stopwords)
        # what builds this analyzer again in another process (analyze/portable.py)
        self.args = (tuple(languages), stopwords, extra_stopwords, detect, decompound, unaccented)
        langs = tuple(dict.fromkeys(lang.strip().lower() for lang in languages))
        if not langs:
            raise ValueError("Analyzer needs at least one language")
        unknown = [lang for lang in langs if lang not in Stemmer.algorithms()]
        if unknown:
            raise ValueError(f"no Snowball stemmer for {', '.join(unknown)}")
        self.languages: tuple[str, ...] = langs
        self.stopwords = stopwords
        self.detect = detect
        # only where the word list is installed; the fingerprint tells an index built without it
        self.decompound = decompound and compounds_available()
        self.unaccented = unaccented
        self.extra_stopwords: frozenset[str] = frozenset(fold(w) for w in extra_stopwords)
        self._stemmers: dict[str, Stemmer.Stemmer] = {}
        self._stops: dict[tuple[str, ...], frozenset[str]] = {}
        self._cjk_stop = CJK_STOPWORDS if stopwords else _EMPTY  # extra_stopwords: alphabetic only
        # Letter hints tell apart a few configured languages; among all of them they mislead
        # (Turkish ü is not German).
        own_hints = {c: h for c, h in HINT_CHARS.items() if SNOWBALL.get(c) in langs}
        # No second vote among the configured languages (where "the" or "die" count fully) when
        # this one leaves a text open: tuned on scifact train (keyword 0.6845 -> 0.69xx), it
        # gained -0.0001 hybrid nDCG@10 on the held halves on average (issue 44).
        self._vote = LanguageVote(None if detect else langs, {} if detect else own_hints)
        # stems used when the vote is undecided, per script
        self._fallback: dict[str, tuple[str, ...]] = {}
        for lang in langs:
            self._fallback.setdefault(LANGUAGE_SCRIPT.get(lang, "latin"), ())
            self._fallback[LANGUAGE_SCRIPT.get(lang, "latin")] += (lang,)
        if detect:
            for script, lang in SCRIPT_DEFAULT.items():
                self._fallback.setdefault(script, (lang,))

    @classmethod
    def from_settings(cls, settings: AnalyzeSettings) -> Analyzer:
        """The analyzer of the ``[analyze]`` settings (the index and its queries share it)."""
        return cls(
            settings.languages, settings.stopwords, settings.extra_stopwords, detect=settings.detect,
            decompound=settings.decompound, unaccented=settings.unaccented,
        )  # fmt: skip

    @property
    def fingerprint(self) -> str:
        """Short stable id of version + configuration; a change means: rebuild the index."""
        config = "\n".join(
            (
                str(ANALYZER_VERSION),
                ",".join(self.languages),
                str(self.stopwords),
                ",".join(sorted(self.extra_stopwords)),
                str(self.detect),
                *(["decompound"] if self.decompound else []),
                *(["unaccented"] if self.unaccented else []),
            )
        )
        return f"a{ANALYZER_VERSION}-{hashlib.sha256(config.encode()).hexdigest()[:10]}"

    def tokens(self, text: str, also: Sequence[str] = (), passage: bool = False) -> list[Token]:
        """Terms in text order, each with its span in ``text``. ``also``: more languages whose
        stems words get when the vote cannot tell the text's language (a query gets those of
        the index's documents: a French "crème" must meet the French stem "crem"). ``passage``:
        a text to be found, not a query: its accented Latin words also get the stems of their
        unaccented spelling, as a query typed without accents has them."""
        terms, starts, ends = self._analyze(text, tuple(also), passage)
        return [Token(t, s, e) for t, s, e in zip(terms, starts, ends, strict=True)]

    def terms(self, text: str, also: Sequence[str] = (), passage: bool = False) -> list[str]:
        """``[t.term for t in self.tokens(text, also, passage)]`` without building Token objects."""
        return self._analyze(text, tuple(also), passage)[0]

    def chunk_terms(self, title: str | None, heading_path: Sequence[str], text: str) -> list[str]:
        """Terms a chunk is keyword-indexed under: its title and headings, then its text.

        Counting heading terms twice or three times (a title field boost) did not help:
        scifact train keyword nDCG@10 0.6845 -> 0.6834 / 0.6826, nfcorpus dev (twice) 0.2861 -> 0.2872.
        """
        return self.terms(contextual_text(title, tuple(heading_path), text), passage=True)

    def language(self, text: str) -> str | None:
        """Language of the text's most used alphabetic script: a Snowball name, or an ISO
        code for a language Snowball lacks ("vi", "uk"); None when the evidence is thin."""
        words: dict[str, list[str]] = {}
        for m in TOKEN_RE.finditer(text):
            if m.lastindex in (G_LATIN, G_OTHER):
                word = m.group().lower() if m.group().isascii() else fold(m.group())
                words.setdefault(script_of_word(word), []).append(word)
        if not words:
            return None
        script = max(words, key=lambda s: len(words[s]))
        if script in SCRIPT_DEFAULT and script not in ("cyrillic", "arabic", "devanagari"):
            return SCRIPT_DEFAULT[script]
        code = self._vote.decide(script, words[script])
        return None if code is None else SNOWBALL.get(code, code)

    def _stemmer(self, lang: str) -> Stemmer.Stemmer:
        """Snowball's stemmer for ``lang``, or ours for Tagalog (tagalog.py), made once."""
        stemmer = self._stemmers.get(lang)
        if stemmer is None:
            made = TagalogStemmer() if lang == "tagalog" else Stemmer.Stemmer(lang)
            stemmer = self._stemmers[lang] = made
        return stemmer

    def _stop(self, langs: tuple[str, ...]) -> frozenset[str]:
        """Words dropped for a text in ``langs``: only those every one of them drops."""
        stop = self._stops.get(langs)
        if stop is None:
            # a language without a list of ours drops nothing itself
            lists = [STOPWORDS[lg] for lg in langs if lg in STOPWORDS] if self.stopwords else []
            stop = frozenset.intersection(*lists) if lists else _EMPTY
            stop = self._stops[langs] = stop | self.extra_stopwords
        return stop

    def _languages(
        self, script: str, words: list[str], also: tuple[str, ...] = ()
    ) -> tuple[tuple[str, ...], str | None]:
        """Stemmers for these words of one script: the voted language, else the fallback (and
        the languages in ``also`` of this script); and the vote's language code, if told."""
        if script in ("greek", "armenian", "tamil") and self.detect:
            return (SCRIPT_DEFAULT[script],), None
        fallback = self._fallback.get(script, ())
        if not self.detect and len(fallback) <= 1:
            return fallback, None
        code = self._vote.decide(script, words)
        if code is None:
            # undecided: the fallback's stems (the vote's leader's stems too gained nothing on held
            # queries, +0.0001 nDCG@10: issue 44, docs/benchmarks.md)
            langs = fallback
            if also:
                extra = [lg for lg in also if LANGUAGE_SCRIPT.get(lg, "latin") == script and lg not in langs]
                langs = (*langs, *extra)
            return langs, None
        name = SNOWBALL.get(code) or _OWN_STEMMERS.get(code)
        return ((name,) if name is not None else ()), code  # a language without a stemmer: unstemmed

    def _compound_parts(self, langs: tuple[str, ...], surface: list[str]) -> dict[int, list[str]]:
        """Index in ``surface`` -> the German stems of that compound's two parts (compounds.py)."""
        if not self.decompound or "german" not in langs:
            return {}
        out: dict[int, list[str]] = {}
        for j, word in enumerate(surface):
            if len(word) >= MIN_LENGTH and word.isalpha():
                parts = split_compound(word, german=langs == ("german",))
                if parts is not None:
                    out[j] = self._stemmer("german").stemWords(list(parts))
        return out

    def _unaccented_stems(
        self, langs: tuple[str, ...], surface: list[str], parts: dict[int, list[str]]
    ) -> dict[int, list[str]]:
        """``parts`` plus, for each accented word, the stems of its unaccented spelling in its
        languages (`información` -> `informacion`, `résumé` -> `resum`): a query typed without
        accents holds those, not the word's own stems."""
        found = [(j, bare) for j, word in enumerate(surface) if (bare := unaccented(word)) is not None]
        if not found:
            return parts
        out = dict(parts)
        bare_words = [bare for _, bare in found]
        per_lang = [self._stemmer(lg).stemWords(bare_words) for lg in langs] or [bare_words]
        for n, (j, _) in enumerate(found):
            out[j] = [*out.get(j, ()), *(lang_stems[n] for lang_stems in per_lang)]
        return out

    def _analyze(
        self, text: str, also: tuple[str, ...] = (), passage: bool = False
    ) -> tuple[list[str], list[int], list[int]]:
        """Parallel lists (terms, starts, ends); alphabetic words are stemmed in place.

        Runs by script (_scripts.TOKEN_RE), folded (_fold.fold). Alphabetic words are stemmed by
        ``_stem``; CamelCase words also give their parts (``getHTTPResponse``: get, http, respons).
        Codes (``0.110.0``, ``snake_case``, ``p53``, ``C++``) are kept whole next to their parts:
        typed whole, they must match whole. A passage's hyphenated word also gives its closed
        spelling (``up-regulated``: ``upregul``), which queries type as often. Digits are terms of
        their own; runs over 255 characters (base64) are skipped. Thai, Lao, Khmer, Myanmar go
        through ICU's word break (segment.py), Chinese, Japanese and Korean to _cjk.py.
        """
        out = _Out()
        terms, starts, ends = out.terms, out.starts, out.ends
        latin = out.words.setdefault("latin", [])
        compounds = {m.start(): m for m in COMPOUND_RE.finditer(text)} if text else {}
        if "+" in text or "#" in text:
            compounds.update((m.start(), m) for m in SUFFIXED_RE.finditer(text))
        hyphens = passage and ("-" in text or "\u2010" in text)
        joined = {m.start(): m for m in HYPHENATED_RE.finditer(text)} if hyphens else {}
        for m in TOKEN_RE.finditer(text):
            group = m.lastindex or 0  # never None: every alternative is a group
            raw = m.group()
            start, end = m.span()
            if compounds and start in compounds:
                c = compounds.pop(start)
                if c.end() - start <= _MAX_COMPOUND:
                    whole = c.group()
                    out.add(whole.lower() if whole.isascii() else fold(whole), start, c.end())
            if joined and start in joined:
                h = joined.pop(start)
                closed = h.group().replace("-", "").replace("\u2010", "")
                if len(closed) <= _MAX_COMPOUND:
                    out.add(closed.lower() if closed.isascii() else fold(closed), start, h.end(), "latin")
            if end - start > _MAX_RUN and group <= G_NUM:
                continue
            if group == G_LATIN:
                if raw.isascii():
                    # the common case, inlined: one lowercase ASCII word
                    latin.append(len(terms))
                    lower = raw.lower()
                    terms.append(lower)
                    starts.append(start)
                    ends.append(end)
                    if lower != raw and not raw.isupper() and _HAS_CAMEL.search(raw):
                        for part in _CAMEL.finditer(raw):
                            out.add(part.group().lower(), start + part.start(), start + part.end(), "latin")
                else:
                    for piece in fold(raw).split():
                        out.add(piece, start, end, None if piece.isdecimal() else "latin")
            elif group == G_OTHER:
                # NFKC may turn one run into several pieces ("\ufc5e" -> " \u064c\u0651",
                # "①" -> "1"); they share the run's span and none may contain a space.
                for piece in fold(raw).split():
                    out.add(piece, start, end, None if piece.isdecimal() else script_of_word(piece))
            elif group == G_NUM:
                out.add(raw if raw.isascii() else fold(raw), start, end)
            elif group == G_SEA:
                for s, e in segment(raw):
                    word = fold(raw[s:e])
                    if word and not word.isspace():
                        out.add(word.replace(" ", ""), start + s, start + e)
            else:
                cjk_terms(out.add, raw, start, group == G_HANGUL, self._cjk_stop)
        if not latin:
            del out.words["latin"]
        if out.words:
            return self._stem(out, also, passage)
        return out.terms, out.starts, out.ends

    def _stem(
        self, out: _Out, also: tuple[str, ...] = (), passage: bool = False
    ) -> tuple[list[str], list[int], list[int]]:
        """Drop stop words and stem the alphabetic terms, each script in its language.

        A word may get several terms, all on its span: the stems of each language the vote leaves
        open (``_languages``), a compound's German parts, a passage's plain spelling of an accented
        word (``_unaccented_stems``), a Tagalog word itself next to its stem."""
        terms = out.terms
        stems: dict[int, list[str]] = {}  # index -> its variants; [] = a dropped stop word
        simple = True
        for script, idxs in out.words.items():
            langs, code = self._languages(script, [terms[i] for i in idxs], also)
            stop = self._stop(langs)
            keep = [i for i in idxs if terms[i] not in stop]
            surface = [terms[i] for i in keep]
            # stemWords on a whole list is PyStemmer's fastest path (C loop, internal cache).
            per_lang = [self._stemmer(lg).stemWords(surface) for lg in langs]
            if langs == ("tagalog",):
                # the word too: a few keywords leave the vote undecided and reach the index with
                # the en/de fallback stems, which leave Tagalog words whole
                per_lang.append(surface)
            parts = self._compound_parts(langs, surface)
            # Vietnamese tone marks tell most words apart (ma, mà, má, mả): no plain spelling there
            if passage and self.unaccented and script == "latin" and code != "vi":
                parts = self._unaccented_stems(langs, surface, parts)
            if len(keep) == len(idxs) and len(per_lang) == 1:
                for i, stem in zip(keep, per_lang[0], strict=True):
                    terms[i] = stem
                # only the words with more terms get a list (most of a French text's words have none)
                for j, more in parts.items():
                    variants = stems[keep[j]] = [terms[keep[j]]]
                    variants.extend(dict.fromkeys(p for p in more if p != variants[0]))
                simple = simple and not parts
                continue
            simple = False
            for i in idxs:
                stems[i] = []
            for j, i in enumerate(keep):
                variants = stems[i]
                for lang_stems in per_lang or [surface]:
                    if lang_stems[j] not in variants:
                        variants.append(lang_stems[j])
                for part in parts.get(j, ()):
                    if part not in variants:
                        variants.append(part)
        if simple:
            return terms, out.starts, out.ends
        out_t: list[str] = []
        out_s: list[int] = []
        out_e: list[int] = []
        for i, term in enumerate(terms):
            for t in stems.get(i, (term,)):
                out_t.append(t)
                out_s.append(out.starts[i])
                out_e.append(out.ends[i])
        return out_t, out_s, out_e
