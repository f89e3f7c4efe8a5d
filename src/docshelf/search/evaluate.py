"""BEIR-layout evaluation: nDCG@10, recall@100, MRR@10 and latency for each search mode."""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docshelf.errors import SourceError
from docshelf.search.searcher import Mode, Searcher
from docshelf.store.base import SearchFilter

__all__ = [
    "EvalSet", "ModeScores", "doc_ranking", "evaluate", "load_beir", "mrr_at", "ndcg_at", "recall_at",
    "write_corpus",
]  # fmt: skip

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass
class EvalSet:
    name: str
    corpus: dict[str, tuple[str, str]]  # id -> (title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


@dataclass
class ModeScores:
    mode: str
    ndcg10: float
    recall100: float
    mrr10: float
    p50_ms: float
    p95_ms: float
    queries: int


def load_beir(folder: Path, split: str = "test", queries_file: Path | None = None) -> EvalSet:
    """Read corpus.jsonl, queries.jsonl and qrels/<split>.tsv.

    ``queries_file`` swaps in other queries with the same ids, e.g. the English
    XQuAD questions against the Chinese paragraphs for a cross-lingual check.
    """
    qrels_file = folder / "qrels" / f"{split}.tsv"
    for needed in (folder / "corpus.jsonl", queries_file or folder / "queries.jsonl", qrels_file):
        if not needed.is_file():
            raise SourceError(f"{needed} is missing: an eval folder needs BEIR's layout")
    corpus = {}
    for row in _jsonl(folder / "corpus.jsonl", "_id"):
        corpus[str(row["_id"])] = (str(row.get("title") or ""), str(row.get("text") or ""))
    qrels: dict[str, dict[str, int]] = {}
    for n, line in _lines(qrels_file):
        parts = line.split("\t") if "\t" in line else line.split()
        if n == 1 and not parts[-1].strip().lstrip("-").replace(".", "", 1).isdigit():
            continue  # header
        try:
            qrels.setdefault(parts[0], {})[parts[1]] = round(float(parts[2]))
        except (IndexError, ValueError):
            raise SourceError(
                f"{qrels_file}:{n}: expected query-id, corpus-id and a score, tab-separated; "
                f"got {line[:80]!r}"
            ) from None
    queries = {}
    for row in _jsonl(queries_file or folder / "queries.jsonl", "_id", "text"):
        if str(row["_id"]) in qrels:
            queries[str(row["_id"])] = str(row["text"])
    return EvalSet(folder.name, corpus, queries, qrels)


def _lines(path: Path) -> list[tuple[int, str]]:
    """Numbered lines without their line end; blank ones left out; not UTF-8: SourceError."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path} is not UTF-8 ({exc.reason} at byte {exc.start}); convert it") from None
    return [(n, line.rstrip("\r")) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]


def _jsonl(path: Path, *required: str) -> list[dict[str, Any]]:
    """Each JSON object of a .jsonl file; a bad line is a SourceError naming ``file:line``."""
    rows = []
    for n, line in _lines(path):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SourceError(f"{path}:{n}: not a JSON object ({exc.msg}); fix the line") from None
        missing = [key for key in required if not isinstance(row, dict) or key not in row]
        if missing:
            raise SourceError(f"{path}:{n}: no {', '.join(repr(k) for k in missing)} field; fix the line")
        rows.append(row)
    return rows


def file_name(doc_id: str) -> str:
    """A file name that maps back to the corpus id (ids may hold any character)."""
    safe = _SAFE.sub("_", doc_id)
    # a leading dot would make it a hidden file, which is never indexed; file names stop at 255 bytes
    if safe == doc_id and not safe.startswith(".") and len(safe) <= 120:
        return f"{safe}.md"
    return f"{safe.lstrip('.')[:120]}~{hashlib.sha1(doc_id.encode()).hexdigest()[:10]}.md"


def write_corpus(data: EvalSet, folder: Path) -> dict[str, str]:
    """Write each corpus entry as a Markdown file; returns file name -> corpus id."""
    folder.mkdir(parents=True, exist_ok=True)
    names = {}
    for doc_id, (title, text) in data.corpus.items():
        name = file_name(doc_id)
        names[name] = doc_id
        body = f"# {title}\n\n{text}\n" if title.strip() else f"{text}\n"
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != body:
            path.write_text(body, encoding="utf-8")
    return names


def doc_ranking(keys: Iterable[str], doc_of: Callable[[str], str | None]) -> list[str]:
    """Corpus ids in the order their first chunk (or file name) comes: a document ranks by its best."""
    ranked: list[str] = []
    seen: set[str] = set()
    for key in keys:
        doc = doc_of(key)
        if doc and doc not in seen:
            seen.add(doc)
            ranked.append(doc)
    return ranked


def ndcg_at(ranked: Sequence[str], rels: dict[str, int], k: int = 10) -> float:
    """nDCG@k with graded gains 2^rel - 1 (BEIR's and pytrec_eval's definition)."""
    dcg = sum((2 ** rels.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum((2**r - 1) / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], rels: dict[str, int], k: int = 100) -> float:
    """Share of the relevant documents among the first ``k``."""
    relevant = {d for d, r in rels.items() if r > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def mrr_at(ranked: Sequence[str], rels: dict[str, int], k: int = 10) -> float:
    """1 / rank of the first relevant document among the first ``k`` (0 when none is)."""
    for i, d in enumerate(ranked[:k]):
        if rels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def evaluate(
    searcher: Searcher,
    data: EvalSet,
    names: dict[str, str],
    collection: str,
    modes: Sequence[Mode] = ("keyword", "semantic", "hybrid"),
    progress: Callable[[str, int, int], None] | None = None,
) -> list[ModeScores]:
    """Run every query in each mode; documents rank by their best chunk.

    A query asks for as many chunks as the searcher fuses by default (``search.candidates``), so
    the ranking is the one any search with these settings returns: a larger ``k`` would widen the
    candidate lists and change the hybrid fusion's statistics. recall@100 counts the documents
    those chunks hold (about 2-3 chunks a document).
    """
    flt = SearchFilter(collections=(collection,))
    chunks = searcher.settings.candidates
    out = []
    for mode in modes:
        nd, rc, mr, lat = [], [], [], []
        for n, (qid, text) in enumerate(data.queries.items(), start=1):
            t0 = time.perf_counter()
            result = searcher.search(text, k=chunks, mode=mode, flt=flt, snippets=False)
            lat.append((time.perf_counter() - t0) * 1000)
            # a passage folded from several documents ranks each of them at its place
            places = (p for h in result.hits for p in (h.path, *(d.path for d in h.also_in)))
            ranked = doc_ranking((Path(p).name for p in places), names.get)
            rels = data.qrels.get(qid, {})
            nd.append(ndcg_at(ranked, rels))
            rc.append(recall_at(ranked, rels))
            mr.append(mrr_at(ranked, rels))
            if progress:
                progress(mode, n, len(data.queries))
        count = max(1, len(nd))
        out.append(
            ModeScores(mode, sum(nd) / count, sum(rc) / count, sum(mr) / count,
                       percentile(lat, 0.5), percentile(lat, 0.95), len(nd))
        )  # fmt: skip
    return out
