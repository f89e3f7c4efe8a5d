"""Re-embed kill trials: SIGKILL `docshelf index --reembed` (hash-64 -> hash-32) at random points.

Shared by tests/reliability/test_reembed.py (2 trials) and bench/reliability_bench.py (many).
After each kill every chunk must still have a vector of the recorded model's size, and a plain
`docshelf index` with the new model must finish a re-embed that had started (one killed before it
recorded anything is finished by `index --reembed`).
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from crashkit import CrashRig

__all__ = ["calibrate_reembed", "chunks_without_vectors", "reembed_trial", "vector_problems"]

NEW_MODEL = "hash-32"


def chunks_without_vectors(store: Any) -> int:
    """Chunks of an open store (embedded or PostgreSQL) that have no vector."""
    from docshelf.store.embedded import SQLiteStore

    if isinstance(store, SQLiteStore):
        sql = "SELECT COUNT(*) FROM chunks WHERE embed_key NOT IN (SELECT key FROM vectors)"
        return int(store._conn.execute(sql).fetchone()[0])
    return int(store._one("SELECT count(*) FROM chunks WHERE embedding IS NULL")[0])


def vector_problems(data: Path) -> tuple[int, list[str], str | None]:
    """(chunks without a vector, other problems, recorded model) of the store in ``data``."""
    conn = sqlite3.connect(f"file:{data / 'docshelf.db'}?mode=ro", uri=True)
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        lost = conn.execute(
            "SELECT COUNT(*) FROM chunks WHERE embed_key NOT IN (SELECT key FROM vectors)"
        ).fetchone()[0]
        sizes = {r[0] for r in conn.execute(
            "SELECT DISTINCT length(v.vector) FROM chunks c JOIN vectors v ON v.key = c.embed_key"
        )}  # fmt: skip
    finally:
        conn.close()
    problems = []
    dim = int(meta.get("embed_dim") or 0)
    if sizes - {dim * 4}:
        problems.append(f"vector sizes {sorted(sizes)} bytes under a recorded {dim}-d model")
    return int(lost), problems, meta.get("embed_model")


def _cmd(rig: CrashRig, *args: str) -> list[str]:
    return rig._cli(*args)


def calibrate_reembed(rig: CrashRig) -> float:
    """Seconds a whole re-embed of the v1 index takes once it holds the lock."""
    rig._restore(fresh=False)
    env = {**rig.env, "DOCSHELF_EMBED__MODEL": NEW_MODEL}
    proc = subprocess.Popen(_cmd(rig, "index", "--reembed"), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    locked = rig._wait_for_lock(proc) or time.monotonic()
    proc.wait(timeout=300)
    return max(0.05, time.monotonic() - locked)


def _new_vectors_written(data: Path) -> bool:
    """True once the re-embed wrote a vector of the new model (kept aside or in place)."""
    try:
        conn = sqlite3.connect(f"file:{data / 'docshelf.db'}?mode=ro", uri=True, timeout=0.1)
    except sqlite3.Error:
        return False
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        sql = "SELECT EXISTS(SELECT 1 FROM vectors WHERE length(vector) = ?)"
        if "reembed" in tables:
            sql += " OR EXISTS(SELECT 1 FROM reembed)"
        return bool(conn.execute(sql, (int(NEW_MODEL.split("-")[1]) * 4,)).fetchone()[0])
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def _meta(data: Path, key: str) -> str | None:
    conn = sqlite3.connect(f"file:{data / 'docshelf.db'}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])
    finally:
        conn.close()


def _pending(data: Path) -> bool:
    return _meta(data, "reembed_pending") is not None


def _model(data: Path) -> str | None:
    return _meta(data, "embed_model")


def _staged(data: Path) -> int:
    """Vectors a re-embed has kept aside (0 before the fix's table exists, or when none)."""
    conn = sqlite3.connect(f"file:{data / 'docshelf.db'}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM reembed").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def _wait_for_new_vectors(proc: subprocess.Popen[bytes], data: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and not _new_vectors_written(data):
        time.sleep(0.002)


def reembed_trial(rig: CrashRig, rng: random.Random, seconds: float | None = None) -> dict[str, Any]:
    """Kill one re-embed at a random point, check the store, then let `index` finish the job.

    Half the kills land at a random time after the lock is taken (``seconds``: a whole re-embed,
    from ``calibrate_reembed``), half just after the first vector of the new model was written,
    in the middle of the re-embed."""
    rig._restore(fresh=False)
    env = {**rig.env, "DOCSHELF_EMBED__MODEL": NEW_MODEL}
    proc = subprocess.Popen(_cmd(rig, "index", "--reembed"), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    rig._wait_for_lock(proc)
    if seconds is None or rng.random() < 0.5:
        _wait_for_new_vectors(proc, rig.data)
        delay = rng.random() * 0.02
    else:
        delay = rng.random() * seconds * 1.1
    time.sleep(delay)  # a random kill point, not a timing assertion
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    lost, problems, _ = vector_problems(rig.data)
    if _staged(rig.data):  # stopped part-way: status must say so
        status = subprocess.run(_cmd(rig, "status", "--json"), env=env, capture_output=True, text=True,
                                timeout=120)  # fmt: skip
        if status.returncode != 0 or not json.loads(status.stdout).get("reembed_pending"):
            problems.append(f"status does not show the unfinished re-embed: {status.stdout[-300:]}")
    # killed before it recorded anything: nothing is pending, so a plain `index` rightly refuses
    # the other model ("re-embed with --reembed"), and that is the way to finish
    started = _pending(rig.data) or _model(rig.data) == NEW_MODEL
    again = ("index",) if started else ("index", "--reembed")
    finish = subprocess.run(_cmd(rig, *again), env=env, capture_output=True, text=True, timeout=300)
    if finish.returncode != 0 or "Traceback" in finish.stderr:
        problems.append(f"index after the kill failed: {finish.stderr.strip()[-400:]}")
    after, more, model = vector_problems(rig.data)
    problems += more
    if after:
        problems.append(f"{after} chunks without a vector after the next index")
    if model != NEW_MODEL:
        problems.append(f"the next index left model {model}, not {NEW_MODEL}")
    return {
        "delay_s": round(delay, 3),
        "killed": killed,
        "started": started,
        "lost": lost,
        "problems": problems,
    }
