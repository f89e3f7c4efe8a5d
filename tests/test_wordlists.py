"""The German compound splitter's word lists: read from wordfreq once, then from the cache dir."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("wordfreq")

# In a fresh process (nothing cached in memory): build an analyzer, note whether that loaded any
# word list, split a compound, and say whether wordfreq had to be imported for it.
_PROBE = """
import json, sys
from docshelf.analyze import Analyzer, compounds
analyzer = Analyzer()
loaded_by_analyzer = compounds._lists.cache_info().currsize
parts = compounds.split_compound("hintergrundaufgaben")
terms = analyzer.terms("Die Hintergrundaufgaben laufen nachts")
print(json.dumps({"loaded_by_analyzer": loaded_by_analyzer, "parts": parts, "terms": terms,
                  "wordfreq": "wordfreq" in sys.modules, "decompound": analyzer.decompound}))
"""


def _run(code: str, cache: Path) -> dict[str, object]:
    """What ``code`` prints (JSON) in a fresh process with ``cache`` as its cache and home."""
    env = {"XDG_CACHE_HOME": str(cache), "PATH": "/usr/bin:/bin", "HOME": str(cache)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    out: dict[str, object] = json.loads(done.stdout)
    return out


def _probe(cache: Path) -> dict[str, object]:
    return _run(_PROBE, cache)


def _cached(cache: Path) -> list[Path]:
    return sorted((cache / "docshelf" / "wordlists").glob("*.txt"))


def test_the_second_process_splits_compounds_from_the_cache_without_wordfreq(tmp_path: Path) -> None:
    first = _probe(tmp_path)
    assert first["wordfreq"] is True and first["decompound"] is True
    assert first["parts"] == ["hintergrund", "aufgaben"]
    assert len(_cached(tmp_path)) == 1
    second = _probe(tmp_path)
    assert second["wordfreq"] is False  # decoding wordfreq's lists took ~0.5-1 s a process
    assert second["parts"] == first["parts"] and second["terms"] == first["terms"]
    assert first["loaded_by_analyzer"] == second["loaded_by_analyzer"] == 0  # only when a word needs it


def test_a_cut_off_cache_file_is_read_from_wordfreq_again_and_rewritten(tmp_path: Path) -> None:
    first = _probe(tmp_path)
    [cached] = _cached(tmp_path)
    whole = cached.read_text(encoding="utf-8")
    cached.write_text(whole[: len(whole) // 3], encoding="utf-8")
    for copy in cached.parent.glob("*.sqlite"):  # made from the text: without it the text is read
        copy.unlink()
    again = _probe(tmp_path)
    assert again["wordfreq"] is True and again["terms"] == first["terms"]
    assert cached.read_text(encoding="utf-8") == whole


def test_an_unwritable_cache_dir_still_splits(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache dir should be", encoding="utf-8")
    got = _probe(blocked)
    assert got["parts"] == ["hintergrund", "aufgaben"]


# Long words of a German and an English passage, and compounds: split from the lists' SQLite
# copy (as a search does) and from the lists in memory (as an index run does).
_BOTH = """
import json
from docshelf.analyze import compounds
words = ["hintergrundaufgaben", "krankenhausbett", "arbeitszimmer", "wochenendarbeit",
         "zusammenarbeit", "bundesverfassungsgericht", "sicherheitsrichtlinien", "turmeric",
         "background", "international", "someone", "fahrradschloss", "datenbankserver",
         "qqqqqqqqqqqq", "geschwindigkeitsbegrenzung", "notfallplan", "incident"]
compounds._asked = 0
from_disk = [compounds.split_compound(w, german=g) for w in words for g in (True, False)]
disk_only = compounds._lists.cache_info().currsize == 0
compounds._asked = compounds._BULK
from_memory = [compounds.split_compound(w, german=g) for w in words for g in (True, False)]
print(json.dumps({"disk_only": disk_only, "same": from_disk == from_memory,
                  "split": sum(p is not None for p in from_disk)}))
"""


def _both(cache: Path) -> dict[str, object]:
    return _run(_BOTH, cache)


def test_a_search_splits_from_the_lists_copy_on_disk_as_from_the_lists_in_memory(tmp_path: Path) -> None:
    """A search splits a few hundred words; reading all 270,000 into memory cost a CLI search
    ~60 ms. The SQLite copy is made once (the first process reads the lists into memory)."""
    first = _both(tmp_path)
    assert first["same"] is True and first["disk_only"] is False
    assert list((tmp_path / "docshelf" / "wordlists").glob("*.sqlite"))
    second = _both(tmp_path)
    assert second["disk_only"] is True  # nothing read into memory for these words
    assert second["same"] is True and second["split"] == first["split"]
    assert isinstance(second["split"], int) and second["split"] >= 10


def test_a_damaged_sqlite_copy_is_left_for_the_lists_in_memory(tmp_path: Path) -> None:
    _both(tmp_path)
    [copy] = (tmp_path / "docshelf" / "wordlists").glob("*.sqlite")
    copy.write_bytes(b"not a database" * 100)
    got = _both(tmp_path)
    assert got["same"] is True and got["disk_only"] is False


_VOTES = """
import json, sys
from docshelf.analyze import languages
table = languages._votes()
print(json.dumps({"stopwordsiso": "stopwordsiso" in sys.modules,
                  "de": table["latin"].get("und"), "size": sum(len(t) for t in table.values())}))
"""


def _votes(cache: Path) -> dict[str, object]:
    return _run(_VOTES, cache)


def test_the_language_vote_table_is_built_once_then_read_from_the_cache_dir(tmp_path: Path) -> None:
    """Building it (every stop list normalised, each word's script) cost a process ~60 ms."""
    first = _votes(tmp_path)
    assert first["stopwordsiso"] is True and first["de"] and "de" in first["de"]  # type: ignore[operator]
    second = _votes(tmp_path)
    assert second == {**first, "stopwordsiso": False}
    [kept] = (tmp_path / "docshelf" / "wordlists").glob("votes-*.json")
    kept.write_text('{"latin": {"und": "de"}}', encoding="utf-8")  # not the table's shape
    assert _votes(tmp_path) == first  # built again


def test_a_failed_write_of_the_sqlite_copy_leaves_no_temporary_file(tmp_path: Path) -> None:
    """A write that fails half-way (here: a row the table refuses; a full disk does the same) kept
    its temporary copy beside the cache until the next write of the same process id."""
    from docshelf.analyze import compounds

    target = tmp_path / "lists.sqlite"
    with pytest.raises(sqlite3.Error):
        compounds._write_db(target, {"haus": 1.0, "bad": None}, frozenset({"house"}))  # type: ignore[dict-item]
    assert list(tmp_path.iterdir()) == []
    compounds._write_db(target, {"haus": 1.0}, frozenset({"house"}))
    assert [p.name for p in tmp_path.iterdir()] == ["lists.sqlite"]
