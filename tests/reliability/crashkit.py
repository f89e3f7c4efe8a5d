"""Crash-safety harness: SIGKILL `docshelf index` at random points, then check what it left behind.

Shared by tests/reliability/test_crash.py (a few trials) and bench/reliability_bench.py (hundreds).
The corpus makes versions recognisable: every paragraph of file ``fNNN.txt`` at version K carries
the marker ``mNNNvKpJ``, and versions differ in their paragraph count, so a document that is half
old and half new, or missing a paragraph, shows up in the stored chunks.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CrashRig", "TrialResult", "cli_env"]

_MARK = re.compile(r"\bm(\d{3})v(\d)p(\d{2})\b")
_PARAS = {1: 6, 2: 9}  # paragraphs per version: a partial swap changes the count
_WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]


def cli_env(tmp: Path, **extra: str) -> dict[str, str]:
    """Environment for a `docshelf` subprocess: the hash embedder, tiny chunks, no user settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(
        DOCSHELF_EMBED__MODEL="hash",
        # 16 tokens: one paragraph per chunk; batch 1: a flush (and swap) every 4 chunks
        DOCSHELF_CHUNK__MAX_TOKENS="16",
        DOCSHELF_CHUNK__OVERLAP_TOKENS="0",
        DOCSHELF_EMBED__BATCH_SIZE="1",
        DOCSHELF_WATCH__LOCK_TIMEOUT_S="20",
        XDG_DATA_HOME=str(tmp / "xdg"),
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def file_text(doc: int, version: int) -> str:
    """The text of file ``doc`` at ``version``: every paragraph carries its marker."""
    rng = random.Random(doc * 10 + version)
    paras = []
    for p in range(_PARAS[version]):
        words = " ".join(rng.choice(_WORDS) for _ in range(8))
        paras.append(f"m{doc:03d}v{version}p{p:02d} {words} v{version}.")
    return "\n\n".join(paras) + "\n"


@dataclass
class TrialResult:
    """What one kill left: problems found (empty lists are good)."""

    kind: str
    delay_s: float
    finished_before_kill: bool
    corrupt: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    mid_sync: bool = False  # the kill left some documents swapped and others not yet


class CrashRig:
    """A corpus, a pristine v1 index of it, and trials that mutate, index, kill and verify."""

    def __init__(self, work: Path, docs: int = 40, seed: int = 0) -> None:
        self.work = work
        self.docs = docs
        self.rng = random.Random(seed)
        self.corpus = work / "corpus"
        self.data = work / "data"
        self.env = cli_env(work)
        self._base_corpus = work / "base-corpus"
        self._base_data = work / "base-data"
        self.sync_s = 0.5  # replaced by calibrate()
        self.start_s = 1.0

    # ----- setup -----
    def _cli(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "docshelf", *args, "--data-dir", str(self.data)]

    def prepare(self) -> None:
        """Write the v1 corpus and index it fully once; trials restore this state."""
        shutil.rmtree(self.work / "corpus", ignore_errors=True)
        self.corpus.mkdir(parents=True)
        for d in range(self.docs):
            (self.corpus / f"f{d:03d}.txt").write_text(file_text(d, 1), "utf-8")
        self.run_index(check=True)
        shutil.copytree(self.corpus, self._base_corpus)  # copy2 keeps mtimes: restored files are unchanged
        shutil.copytree(self.data, self._base_data)

    def run_index(self, check: bool = False) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            self._cli("index", str(self.corpus)), env=self.env, capture_output=True, text=True, timeout=300
        )
        if check and proc.returncode != 0:
            raise RuntimeError(f"index failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return proc

    def _restore(self, fresh: bool) -> set[int]:
        """Reset corpus and data to the v1 state (no data at all when ``fresh``); the v1 docs."""
        for path in (self.corpus, self.data):
            shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(self._base_corpus, self.corpus)
        if fresh:
            return set()
        shutil.copytree(self._base_data, self.data)
        return set(range(self.docs))

    def _mutate(self) -> dict[int, int]:
        """Edit about half the files to v2, delete some, add some; the expected version per doc."""
        expected = dict.fromkeys(range(self.docs), 1)
        for d in range(self.docs):
            roll = self.rng.random()
            if roll < 0.5:
                (self.corpus / f"f{d:03d}.txt").write_text(file_text(d, 2), "utf-8")
                expected[d] = 2
            elif roll < 0.6:
                (self.corpus / f"f{d:03d}.txt").unlink()
                del expected[d]
        for d in range(self.docs, self.docs + self.docs // 8):
            version = self.rng.choice((1, 2))
            (self.corpus / f"f{d:03d}.txt").write_text(file_text(d, version), "utf-8")
            expected[d] = version
        return expected

    def _lock_pid(self) -> int | None:
        try:
            owner = json.loads((self.data / "write.lock").read_text() or "null")
        except (OSError, ValueError):
            return None
        return owner.get("pid") if isinstance(owner, dict) else None

    def calibrate(self) -> None:
        """Measure start-up and sync time of an update run, so kill points cover the whole sync."""
        self._restore(fresh=False)
        self._mutate()
        started = time.monotonic()
        proc = subprocess.Popen(self._cli("index"), env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        locked = self._wait_for_lock(proc)
        proc.wait(timeout=300)
        ended = time.monotonic()
        self.start_s = max(0.05, (locked or ended) - started)
        self.sync_s = max(0.05, ended - (locked or started))

    def _wait_for_lock(self, proc: subprocess.Popen[bytes]) -> float | None:
        """When ``proc`` took the writer lock (polls the lock file), or None if it exited first."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if self._lock_pid() == proc.pid:
                return time.monotonic()
            time.sleep(0.002)
        return None

    # ----- one trial -----
    def trial(self) -> TrialResult:
        fresh = self.rng.random() < 0.2
        before = self._restore(fresh)
        expected = self._mutate() if not fresh else dict.fromkeys(range(self.docs), 1)
        from_start = self.rng.random() < 0.25  # some kills land in start-up, store opening, migration
        # squared: documents are swapped early in a sync (the tail is commit and checkpoint),
        # so early kill points get more of the trials
        delay = self.rng.random() ** 2 * ((self.start_s if from_start else 0) + self.sync_s * 1.1)
        proc = subprocess.Popen(self._cli("index", str(self.corpus)), env=self.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        if not from_start:
            self._wait_for_lock(proc)
        time.sleep(delay)  # a random kill point, not a timing assertion
        finished = proc.poll() is not None
        if not finished:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        result = TrialResult("fresh" if fresh else "update", delay, finished)
        self._check_after_kill(before, expected, result)
        converge = self.run_index()
        if converge.returncode != 0 or "Traceback" in converge.stderr:
            result.crashes.append(f"re-index after the kill failed: {converge.stderr.strip()[-500:]}")
        else:
            self._check_converged(expected, result)
        return result

    # ----- checks -----
    def _check_after_kill(self, before: set[int], expected: dict[int, int], result: TrialResult) -> None:
        db = self.data / "docshelf.db"
        if not db.exists():
            if before:
                result.lost.append("the database file is gone")
            return
        try:
            docs = _read_docs(db)
        except (sqlite3.Error, ValueError) as exc:
            result.corrupt.append(f"database unreadable: {exc}")
            return
        result.corrupt.extend(_doc_problems(docs))
        present = {d for d, _ in docs.values()}
        # updates: some edited files swapped, others not yet; fresh: some files in, others not yet
        changed = {d for d, v in expected.items() if d in before and v == 2} if before else set(expected)
        swapped = {d for d, v in docs.values() if d in changed and (v == 2 or not before)}
        result.mid_sync = 0 < len(swapped) < len(changed)
        # files deleted before the run may go; every other file indexed before must still be there
        on_disk = {int(p.stem[1:]) for p in self.corpus.glob("f*.txt")}
        result.lost.extend(f"f{d:03d}.txt" for d in sorted((before & on_disk) - present))
        result.corrupt.extend(_open_problems(self.data))

    def _check_converged(self, expected: dict[int, int], result: TrialResult) -> None:
        db = self.data / "docshelf.db"
        try:
            docs = _read_docs(db, embedded=True)
        except (sqlite3.Error, ValueError) as exc:
            result.corrupt.append(f"database unreadable after re-index: {exc}")
            return
        result.corrupt.extend(_doc_problems(docs))
        got = {d: v for d, v in docs.values()}
        if got != expected:
            wrong = sorted(set(got.items()) ^ set(expected.items()))[:5]
            result.corrupt.append(f"re-index did not converge: (doc, version) differences {wrong}")
        result.corrupt.extend(_open_problems(self.data, search_markers=expected))


def _read_docs(db: Path, embedded: bool = False) -> dict[str, tuple[int, int]]:
    """{path: (doc number, version)} after checking integrity and that each doc is whole: a chunk
    without a vector must be one the store records as still to embed (keyword-first), and with
    ``embedded`` (after a run that finished) there may be none."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        check = conn.execute("PRAGMA integrity_check").fetchall()
        if check != [("ok",)]:
            raise ValueError(f"integrity_check: {check[:3]}")
        if conn.execute("PRAGMA foreign_key_check").fetchall():
            raise ValueError("foreign_key_check found orphans")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "documents" not in tables:  # killed before the schema was committed: an empty store
            return {}
        rows = conn.execute("SELECT path, content_hash, id FROM documents").fetchall()
        out: dict[str, tuple[int, int]] = {}
        for path, digest, doc_id in rows:
            d = int(Path(path).stem[1:])
            version = next((v for v in _PARAS if _sha(file_text(d, v)) == digest), 0)
            texts = [r[0] for r in conn.execute("SELECT text FROM chunks WHERE doc_id=?", (doc_id,))]
            marks = [m for t in texts for m in _MARK.findall(t)]
            if not texts or any(not _MARK.search(t) for t in texts):
                raise ValueError(f"{path}: a chunk without a marker, or no chunks")
            versions = {int(v) for _, v, _ in marks}
            paras = sorted({int(p) for _, _, p in marks})
            if version == 0 or versions != {version} or {int(n) for n, _, _ in marks} != {d}:
                raise ValueError(f"{path}: mixed versions (row hash v{version}, chunks {versions})")
            if paras != list(range(_PARAS[version])):
                raise ValueError(f"{path}: v{version} is incomplete (paragraphs {paras})")
            waiting = "unembedded" in tables
            recorded = " AND seq NOT IN (SELECT seq FROM unembedded)" if waiting else ""
            missing = conn.execute(
                "SELECT COUNT(*) FROM chunks WHERE doc_id=? AND embed_key NOT IN (SELECT key FROM vectors)"
                + recorded,
                (doc_id,),
            ).fetchone()[0]
            if missing:
                raise ValueError(f"{path}: {missing} chunks without a vector")
            if embedded and waiting:
                sql = "SELECT COUNT(*) FROM chunks c JOIN unembedded u ON u.seq = c.seq WHERE c.doc_id=?"
                if pending := conn.execute(sql, (doc_id,)).fetchone()[0]:
                    raise ValueError(f"{path}: {pending} chunks still waiting for a vector")
            out[path] = (d, version)
        return out
    finally:
        conn.close()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _doc_problems(docs: dict[str, tuple[int, int]]) -> list[str]:
    return [f"{p}: stored under the wrong name" for p, (d, _) in docs.items() if p != f"f{d:03d}.txt"]


def _open_problems(data: Path, search_markers: dict[int, int] | None = None) -> list[str]:
    """Open the store the way docshelf does; after a full re-index every doc must be found by keyword."""
    from docshelf.config import load_settings
    from docshelf.embed import HashEmbedder
    from docshelf.testing import Stages

    settings = load_settings()
    settings.store.data_dir = data
    problems: list[str] = []
    try:
        with Stages(settings, embedder=HashEmbedder()) as rt:
            rt.store.stats()
            if search_markers is not None:
                if rt.store.needs_keyword_rebuild():
                    problems.append("keyword index still behind the database after a full re-index")
                searcher = rt.searcher()
                for d, v in sorted(search_markers.items()):
                    hits = searcher.search(f"m{d:03d}v{v}p00", k=3, mode="keyword").hits
                    if not hits or hits[0].path != f"f{d:03d}.txt":
                        problems.append(f"f{d:03d}.txt not found by its marker after re-index")
    except Exception as exc:  # any failure to open is what this check is looking for
        problems.append(f"store does not open: {type(exc).__name__}: {exc}")
    return problems
