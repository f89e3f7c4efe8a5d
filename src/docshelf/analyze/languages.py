"""Which language a run of words is in: script first, then stop-word statistics within the script.

Scripts used by one Snowball language decide alone (Greek, Armenian, Tamil). Within a
shared script (Latin, Cyrillic, Arabic, Devanagari) each word votes for the languages
whose stop-word list (stopwords-iso, from the ``stopwordsiso`` package) holds it, split
evenly between them, so "a" or "de" count little and "the" or "und" count fully.
Languages without a Snowball stemmer (Vietnamese, Ukrainian, ...) take part in the vote
too: their text is then left unstemmed instead of being stemmed as a neighbour's.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import itertools
import json
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = [
    "LANGUAGE_SCRIPT", "MARGIN", "MIN_VOTES", "SCRIPT_DEFAULT", "SNOWBALL", "LanguageVote",
    "script_of_word", "winner",
]  # fmt: skip

# ISO 639-1 -> Snowball algorithm name, for every Snowball language stopwords-iso knows.
SNOWBALL: dict[str, str] = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech",
    "da": "danish", "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian",
    "fi": "finnish", "fr": "french", "de": "german", "el": "greek", "hi": "hindi",
    "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian", "lt": "lithuanian",
    "no": "norwegian", "fa": "persian", "pl": "polish", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "st": "sesotho", "es": "spanish", "sv": "swedish", "tr": "turkish",
}  # fmt: skip
# The script of each Snowball language that is not written in Latin letters.
LANGUAGE_SCRIPT: dict[str, str] = {
    "arabic": "arabic", "persian": "arabic", "armenian": "armenian", "greek": "greek",
    "hindi": "devanagari", "nepali": "devanagari", "russian": "cyrillic", "serbian": "cyrillic",
    "tamil": "tamil", "yiddish": "hebrew",
}  # fmt: skip
# The stemmer for a non-Latin script when the vote is undecided (one language owns Greek,
# Armenian and Tamil; Russian, Arabic and Hindi are by far the most written in theirs).
SCRIPT_DEFAULT: dict[str, str] = {
    "greek": "greek", "armenian": "armenian", "tamil": "tamil",
    "cyrillic": "russian", "arabic": "arabic", "devanagari": "hindi",
}  # fmt: skip
# Unicode name prefixes of the scripts that route languages (first word of the character name).
_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARABIC", "DEVANAGARI", "TAMIL", "ARMENIAN", "HEBREW")
_EXTRA_SCRIPTS = {"COPTIC": "greek"}  # Greek letters in the Coptic block


@functools.lru_cache(maxsize=4096)
def _script_of_char(ch: str) -> str:
    """ "latin", "cyrillic", ... for a letter of a script that routes languages, else "other"."""
    name = unicodedata.name(ch, "")
    head = name.split(" ", 1)[0]
    if head in _SCRIPTS:
        return head.lower()
    return _EXTRA_SCRIPTS.get(head, "other")


def script_of_word(word: str) -> str:
    """The script of a word's first letter: "latin", "cyrillic", "greek", "arabic", ..., "other"."""
    for ch in word:
        if ch.isalpha():
            return "latin" if ch.isascii() else _script_of_char(ch)
    return "other"


# Lists full of other languages' words (Breton, Latin, Afrikaans, Esperanto): in the vote they
# took English and German questions and titles from their own languages.
_NOISY = frozenset({"af", "br", "eo", "la"})
_MAX_VOTES = 200


_VOTES_FORMAT = 1  # of the cached table below; a change to how it is built needs a new number


def _votes_file() -> Path | None:
    """Where the table is kept, named by stopwords-iso's data file's size (found without
    importing the package) and what the build leaves out."""
    from docshelf.config import default_cache_dir  # (here: the analyzer needs no settings)

    spec = importlib.util.find_spec("stopwordsiso")
    if spec is None or spec.origin is None:
        return None
    try:
        size = (Path(spec.origin).parent / "stopwords-iso.json").stat().st_size
    except OSError:
        return None
    noisy = "-".join(sorted(_NOISY))
    return default_cache_dir() / "wordlists" / f"votes-{size}-{noisy}-v{_VOTES_FORMAT}.json"


def _build_votes() -> dict[str, dict[str, list[str]]]:
    import stopwordsiso

    by_script: dict[str, dict[str, list[str]]] = {}
    for code in sorted(stopwordsiso.langs() - _NOISY):
        words = [unicodedata.normalize("NFKC", w.casefold()) for w in stopwordsiso.stopwords(code)]
        scripts = [script_of_word(w) for w in words]
        known = [s for s in scripts if s != "other"]
        if not known:
            continue  # CJK and Thai lists: those scripts are segmented, not stemmed
        script = max(set(known), key=known.count)
        table = by_script.setdefault(script, {})
        for word, word_script in zip(words, scripts, strict=True):
            if word_script == script:
                table.setdefault(word, []).append(code)
    return by_script


def _read_votes(path: Path | None) -> dict[str, dict[str, list[str]]] | None:
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    whole = isinstance(data, dict) and all(
        isinstance(t, dict) and all(isinstance(c, list) for c in t.values()) for t in data.values()
    )
    return data if whole else None


@functools.lru_cache(maxsize=1)
def _votes() -> dict[str, dict[str, tuple[str, ...]]]:
    """script -> word -> the languages (ISO codes) whose stop list has it.

    Kept as JSON in the cache dir: building it (every list normalised, each word's script) cost
    each process ~60 ms, a sixth of a keyword search from the command line."""
    path = _votes_file()
    by_script = _read_votes(path)
    if by_script is None:
        by_script = _build_votes()
        if path is not None:
            from docshelf.sources.mirror import write_atomic

            with contextlib.suppress(OSError):  # a read-only cache dir: built again next time
                write_atomic(path, json.dumps(by_script, ensure_ascii=False).encode("utf-8"))
    return {s: {w: tuple(c) for w, c in table.items()} for s, table in by_script.items()}


class LanguageVote:
    """Decides the language of the words of one script, or gives up when the evidence is thin."""

    def __init__(self, allowed: Iterable[str] | None = None, hints: Mapping[str, str] | None = None) -> None:
        """``allowed``: the Snowball names that may win (None: every language, those without a
        stemmer too, so their text stays unstemmed); ``hints``: ISO code -> letters typical of that
        language (ß, ñ), a vote for a word no stop list holds."""
        self.allowed = None if allowed is None else frozenset(allowed)
        self._hints = dict(hints or {})

    @functools.cached_property
    def _table(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """``_votes`` narrowed to the allowed languages (a word no allowed language lists, out)."""
        tables = _votes()
        if self.allowed is None:
            return tables
        codes = {c for c, name in SNOWBALL.items() if name in self.allowed}
        out: dict[str, dict[str, tuple[str, ...]]] = {}
        for script, table in tables.items():
            kept = {w: tuple(c for c in langs if c in codes) for w, langs in table.items()}
            out[script] = {w: langs for w, langs in kept.items() if langs}
        return out

    def scores(self, script: str, words: Iterable[str]) -> dict[str, float]:
        """Language (ISO code) -> evidence; each word's vote is split between its languages."""
        table = self._table.get(script, {})
        scores: dict[str, float] = {}
        # the first few hundred words tell a chunk's language as well as all of them, for less
        for word in itertools.islice(words, _MAX_VOTES):
            langs = table.get(word)
            if langs is None and self._hints and not word.isascii():
                langs = tuple(c for c, chars in self._hints.items() if any(ch in chars for ch in word))
            if langs:
                share = 1.0 / len(langs)
                for code in langs:
                    scores[code] = scores.get(code, 0.0) + share
        return scores

    def ranked(self, script: str, words: Iterable[str]) -> list[tuple[str, float]]:
        """``scores`` best first (ties by code)."""
        return sorted(self.scores(script, words).items(), key=lambda kv: (-kv[1], kv[0]))

    def decide(self, script: str, words: Iterable[str]) -> str | None:
        """ISO code of the clear winner (>= 1.2 votes and 1.5 times the runner-up), else None."""
        return winner(self.ranked(script, words))


# Chosen on the XQuAD questions (de / en): 1083 / 1164 told right, 1 / 0 wrong, the rest
# undecided; 1.5 and twice: 985 / 1128 right, 0 wrong; 1.0 and 1.5 times: 3 wrong in German.
MIN_VOTES, MARGIN = 1.2, 1.5


def winner(ranked: list[tuple[str, float]]) -> str | None:
    """The clear winner of a ``LanguageVote.ranked`` list, else None."""
    if not ranked:
        return None
    best, score = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0.0
    return best if score >= MIN_VOTES and score >= MARGIN * second else None
