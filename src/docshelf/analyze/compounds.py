"""German compounds split in two against a word list (wordfreq's, when the package is installed).

``Hintergrundaufgaben`` is also indexed under ``hintergrund`` and ``aufgaben``, so it meets a page
that says ``Hintergrundtasks``. A word is split only when it is not itself a common word and both
parts (4+ letters, a linking s / es / n / en allowed) are: measured on the xquad-de questions
(a bench-only version at zipf 3; `bench/tune_analyzer.py --variants default no-decompound` compares
the shipped one), keyword nDCG@10 0.9419 -> 0.9479 (0.9501 as shipped, at zipf 2.4).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import sqlite3
import threading
import unicodedata
from collections.abc import Callable
from pathlib import Path

__all__ = ["MIN_LENGTH", "available", "split_compound"]

MIN_LENGTH = 8  # shorter words are rarely compounds, and their halves too short to mean much
_MIN_PART = 4
# zipf frequency (log10 per billion words) a part needs: 3 = about once per million words
_ZIPF = 2.4
_LINKS = ("s", "es", "n", "en")


_EN_ZIPF = 1.5
_FORMAT = 1  # of the cached lists below; a new layout or new thresholds need a new number


def _last_bucket(zipf: float) -> int:
    """The last of wordfreq's frequency buckets (one per centibel) at or above ``zipf``."""
    return round(100 * (9 - zipf))


def _data_files() -> tuple[Path, Path] | None:
    """wordfreq's German and English lists, found without importing it (0.1 s)."""
    spec = importlib.util.find_spec("wordfreq")
    if spec is None or spec.origin is None:
        return None
    data = Path(spec.origin).parent / "data"
    return data / "large_de.msgpack.gz", data / "large_en.msgpack.gz"


def _cache_file(files: tuple[Path, Path]) -> Path:
    """Where the lists are kept as text, named by wordfreq's file sizes and the thresholds, so a
    new wordfreq or new thresholds write a new file instead of reading a stale one."""
    from docshelf.config import default_cache_dir  # (here: the analyzer needs no settings)

    sizes = "-".join(str(f.stat().st_size) for f in files)
    return default_cache_dir() / "wordlists" / f"wordfreq-{sizes}-z{_ZIPF}-{_EN_ZIPF}-v{_FORMAT}.txt"


def _from_wordfreq() -> str:
    """Both lists as text: a line per centibel of frequency (German words), then one line of
    English words. Reading wordfreq's files takes ~0.5 s; this text, ~0.1 s."""
    import wordfreq

    seen: set[str] = set()
    lines: list[str] = []
    for cb, bucket in enumerate(wordfreq.get_frequency_list("de", "large")):
        if cb > _last_bucket(_ZIPF):
            break  # buckets are ordered by frequency
        words = {unicodedata.normalize("NFKC", w.casefold()) for w in bucket if w.isalpha()} - seen
        seen |= words
        lines.append(" ".join(sorted(words)))
    english: set[str] = set()
    for cb, bucket in enumerate(wordfreq.get_frequency_list("en", "large")):
        if cb > _last_bucket(_EN_ZIPF):
            break
        english.update(unicodedata.normalize("NFKC", w.casefold()) for w in bucket)
    lines.append(" ".join(sorted(w for w in english if w and not any(c.isspace() for c in w))))
    return "\n".join(lines)


def _read_cache(files: tuple[Path, Path]) -> tuple[Path | None, str | None]:
    """The cache file's path (None: no cache dir) and its text (None: not written yet, or not
    whole: one line per German centibel plus the English line)."""
    try:
        cached = _cache_file(files)
    except OSError:  # wordfreq's files cannot be read either
        return None, None
    try:
        text = cached.read_text(encoding="utf-8")
    except OSError:
        return cached, None
    return cached, text if text.count("\n") == _last_bucket(_ZIPF) + 1 else None


@functools.cache
def _lists() -> tuple[dict[str, float], frozenset[str]] | None:
    """Common German words (casefolded) -> frequency, and English words; None without wordfreq.

    Kept as text in the cache dir, so a process (each CLI command) does not decode wordfreq's
    lists again."""
    files = _data_files()
    if files is None:
        return None
    cached, text = _read_cache(files)
    if text is None:
        try:
            text = _from_wordfreq()
        except ImportError:
            return None
        if cached is not None:
            from docshelf.sources.mirror import write_atomic

            with contextlib.suppress(OSError):  # a read-only cache dir: the lists are just not kept
                write_atomic(cached, text.encode("utf-8"))
    *german, english = text.split("\n")
    words: dict[str, float] = {}
    for cb, line in enumerate(german):
        words.update(dict.fromkeys(line.split(), 10 ** (-cb / 100)))
    return words, frozenset(english.split())


# Words a process splits with a lookup each in the lists' SQLite copy before it reads them into
# memory: a search splits the few hundred long words of its hits' passages (reading all 270,000
# words cost a CLI search ~60 ms); an index run splits millions.
_BULK = 5_000
_asked = 0
_DB_LOCK = threading.Lock()


def _write_db(path: Path, german: dict[str, float], english: frozenset[str]) -> None:
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("CREATE TABLE german (w TEXT PRIMARY KEY, f REAL NOT NULL) WITHOUT ROWID")
            conn.execute("CREATE TABLE english (w TEXT PRIMARY KEY) WITHOUT ROWID")
            conn.executemany("INSERT INTO german VALUES (?, ?)", german.items())
            conn.executemany("INSERT INTO english VALUES (?)", ((w,) for w in english))
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, path)  # whole or absent
    finally:
        tmp.unlink(missing_ok=True)  # a failed write (a full disk) leaves no partial copy behind


@functools.cache
def _db() -> sqlite3.Connection | None:
    """The lists as SQLite beside their text (made from it once per cache version); None where
    it cannot be had (no wordfreq, a read-only cache dir: the lists are read into memory)."""
    files = _data_files()
    if files is None:
        return None
    try:
        path = _cache_file(files).with_suffix(".sqlite")
        if not path.is_file():
            lists = _lists()
            if lists is None:
                return None
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_db(path, *lists)
        conn = sqlite3.connect(path.as_uri() + "?mode=ro", uri=True, check_same_thread=False)
        conn.execute("SELECT w FROM german LIMIT 1").fetchall()
        conn.execute("SELECT w FROM english LIMIT 1").fetchall()
    except (OSError, sqlite3.Error):
        return None
    return conn


def _looked_up(conn: sqlite3.Connection, sql: str, word: str) -> tuple[object, ...] | None:
    with _DB_LOCK:
        row: tuple[object, ...] | None = conn.execute(sql, (word,)).fetchone()
    return row


def _lookups() -> tuple[Callable[[str], float], Callable[[str], bool]] | None:
    """A German word's frequency (0.0: not a common word) and whether a word is English; None
    without wordfreq (no splitting then)."""
    global _asked
    if _lists.cache_info().currsize == 0 and _asked < _BULK:
        _asked += 1
        conn = _db()
        if conn is not None:

            def freq(word: str) -> float:
                row = _looked_up(conn, "SELECT f FROM german WHERE w = ?", word)
                return float(row[0]) if row is not None else 0.0  # type: ignore[arg-type]

            def english(word: str) -> bool:
                return _looked_up(conn, "SELECT 1 FROM english WHERE w = ?", word) is not None

            return freq, english
    lists = _lists()
    if lists is None:
        return None
    german, english_words = lists
    return (lambda word: german.get(word, 0.0)), english_words.__contains__


def available() -> bool:
    """Whether the word list is installed (``pip install docshelf[german]``); loads nothing."""
    return _data_files() is not None


def split_compound(word: str, german: bool = True) -> tuple[str, str] | None:
    """The two parts of a casefolded German compound, the split whose rarer part is most common.

    ``german=False``: the text may be English too, so an English word is left whole. (English
    words, zipf >= 1.5: an undecided text such as a short query gets English and German stems and
    splits none of these, `turmeric` is no turm + eric. Without that list 148 of the first 3,000
    nfcorpus queries gained parts and its dev keyword nDCG@10 fell by 0.005; with it 9 do and the
    figure is unchanged, 0.2861, bench/tune_analyzer.py.)"""
    if len(word) < MIN_LENGTH:
        return None
    found = _lookups()
    if found is None:
        return None
    freq, english = found
    if freq(word) > 0.0 or (not german and english(word)):
        return None
    best, parts = 0.0, None
    for i in range(_MIN_PART, len(word) - _MIN_PART + 1):
        left, right = word[:i], word[i:]
        tail = freq(right)
        if tail <= best:
            continue
        candidates = [left] + [left[: -len(link)] for link in _LINKS if left.endswith(link)]
        for stem in candidates:
            score = min(freq(stem), tail) if len(stem) >= _MIN_PART else 0.0
            if score > best:
                best, parts = score, (stem, right)
    return parts
