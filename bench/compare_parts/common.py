"""Helpers shared by the parent and every worker (standard library and numpy only).

Workers run in two interpreters: docshelf's own and the bench venv of the reference
systems (`python bench/compare.py --setup`), so nothing here may import docshelf.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import resource
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

DIM = 384  # multilingual-e5-small and all-MiniLM-L6-v2 both embed into 384 dimensions
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")


def peak_rss_mb() -> float:
    """Peak resident set size of this process since exec (VmHWM; ru_maxrss would carry over the
    RSS of the process that started this one)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux


def dir_bytes(path: Path) -> int:
    total = 0
    for base, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += (Path(base) / name).stat().st_size
    return total


def iter_corpus(path: Path) -> Iterator[tuple[str, str, str]]:
    """(id, title, text) rows of a BEIR corpus.jsonl."""
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            yield str(row["_id"]), row.get("title") or "", row.get("text") or ""


def doc_text(title: str, text: str) -> str:
    return f"{title}\n\n{text}" if title.strip() else text


def word_chunks(text: str, size: int = 500, overlap: int = 50) -> list[str]:
    """The seed server's chunker: whitespace words, `size` a chunk, `overlap` shared."""
    words = text.split()
    if not words:
        return []
    step = size - overlap
    return [" ".join(words[i : i + size]) for i in range(0, max(1, len(words) - overlap), step)]


def ranked_docs(doc_ids: list[str], limit: int = 100) -> list[str]:
    """Documents in the order of their best chunk."""
    out: list[str] = []
    seen: set[str] = set()
    for d in doc_ids:
        if d not in seen:
            seen.add(d)
            out.append(d)
            if len(out) == limit:
                break
    return out


# ----- synthetic scale corpus -----


def sentence_pool(corpus: Path, limit: int = 3000) -> list[str]:
    pool: list[str] = []
    for n, (_, _, text) in enumerate(iter_corpus(corpus)):
        if n >= limit:
            break
        pool.extend(s for s in _SENTENCE.split(text) if 20 <= len(s) <= 400)
    return pool


def synthetic_chunks(pool: list[str], n: int, seed: int = 7) -> Iterator[str]:
    """n chunks of 3-6 sentences drawn from real abstracts (deterministic)."""
    rng = random.Random(seed)
    for _ in range(n):
        yield " ".join(rng.choice(pool) for _ in range(rng.randint(3, 6)))


_CENTROIDS: npt.NDArray[np.float32] | None = None


def synthetic_vector(text: str, spread: float = 0.35) -> npt.NDArray[np.float32]:
    """A unit vector for `text`: one of 2,000 fixed centroids plus noise, seeded by a text hash.

    Every system gets vectors of the same clustered distribution without running a model.
    """
    global _CENTROIDS
    if _CENTROIDS is None:
        c = np.random.default_rng(11).standard_normal((2000, DIM)).astype(np.float32)
        _CENTROIDS = c / np.linalg.norm(c, axis=1, keepdims=True)
    seed = zlib.crc32(text.encode("utf-8"))
    noise = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32) / np.sqrt(DIM)
    v = _CENTROIDS[seed % len(_CENTROIDS)] + spread * noise
    out: npt.NDArray[np.float32] = (v / np.linalg.norm(v)).astype(np.float32)
    return out
