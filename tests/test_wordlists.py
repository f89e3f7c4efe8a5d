"""The German compound splitter's word lists: read from wordfreq once, then from the cache dir."""

from __future__ import annotations

import json
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


def _probe(cache: Path) -> dict[str, object]:
    env = {"XDG_CACHE_HOME": str(cache), "PATH": "/usr/bin:/bin", "HOME": str(cache)}
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    out: dict[str, object] = json.loads(done.stdout)
    return out


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
    again = _probe(tmp_path)
    assert again["wordfreq"] is True and again["terms"] == first["terms"]
    assert cached.read_text(encoding="utf-8") == whole


def test_an_unwritable_cache_dir_still_splits(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache dir should be", encoding="utf-8")
    got = _probe(blocked)
    assert got["parts"] == ["hintergrund", "aufgaben"]
