"""Crash safety: `docshelf index` SIGKILLed at random points never corrupts or loses the index.

A handful of trials here (seeded, < 15 s); `python bench/reliability_bench.py` runs hundreds.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from crashkit import CrashRig, _read_docs

TRIALS = 5


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> CrashRig:
    rig = CrashRig(tmp_path_factory.mktemp("crash"), docs=24, seed=8)
    rig.prepare()
    rig.calibrate()
    return rig


def test_sigkill_during_index_keeps_a_whole_store_that_converges(rig: CrashRig) -> None:
    results = [rig.trial() for _ in range(TRIALS)]
    problems = [(r.kind, round(r.delay_s, 3), r.corrupt, r.lost, r.crashes) for r in results]
    assert all(not (r.corrupt or r.lost or r.crashes) for r in results), problems
    assert any(not r.finished_before_kill for r in results)  # the kills did land


def test_the_checker_catches_a_half_swapped_or_incomplete_document(rig: CrashRig, tmp_path: Path) -> None:
    """The verification must be able to fail: damage copies of a converged store by hand."""
    rig.trial()  # leaves a converged store
    assert len(_read_docs(rig.data / "docshelf.db")) > 0
    damages = {
        "incomplete": "DELETE FROM chunks WHERE ordinal=1 AND doc_id=(SELECT MIN(doc_id) FROM chunks)",
        "mixed versions": "UPDATE chunks SET text=text || ' m000v9p00' WHERE ordinal=0",
        "without a vector": "DELETE FROM vectors WHERE key=(SELECT MIN(embed_key) FROM chunks)",
    }
    for why, sql in damages.items():
        copy = tmp_path / f"{why}.db"
        src, dst = sqlite3.connect(rig.data / "docshelf.db"), sqlite3.connect(copy)
        src.backup(dst)
        src.close()
        dst.execute("PRAGMA foreign_keys=ON")  # as the store writes: a chunk's rows that hang on it go too
        with dst:
            dst.execute(sql)
        dst.close()
        with pytest.raises(ValueError, match=why):
            _read_docs(copy)
