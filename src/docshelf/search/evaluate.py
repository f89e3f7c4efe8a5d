"""BEIR-layout evaluation: nDCG@10, recall@100, MRR@10 and latency for each search mode."""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from docshelf.errors import SourceError
from docshelf.search.searcher import Mode, Searcher
from docshelf.store.base import SearchFilter

__all__ = ["EvalSet", "ModeScores", "evaluate", "load_beir", "mrr_at", "ndcg_at", "recall_at", "write_corpus"]

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")
# Chunks fetched per query: documents hold ~2-3 chunks, and recall@100 needs 100 distinct documents.
_CHUNKS = 300


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
    with (folder / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            corpus[str(row["_id"])] = (row.get("title") or "", row.get("text") or "")
    qrels: dict[str, dict[str, int]] = {}
    with qrels_file.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            parts = line.rstrip("\n").split("\t")
            if n == 0 and not parts[-1].strip().lstrip("-").isdigit():
                continue  # header
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    queries = {}
    with (queries_file or folder / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if str(row["_id"]) in qrels:
                queries[str(row["_id"])] = row["text"]
    return EvalSet(folder.name, corpus, queries, qrels)


def file_name(doc_id: str) -> str:
    """A file name that maps back to the corpus id (ids may hold any character)."""
    safe = _SAFE.sub("_", doc_id)
    return f"{safe}.md" if safe == doc_id else f"{safe}~{hashlib.sha1(doc_id.encode()).hexdigest()[:10]}.md"


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


def ndcg_at(ranked: Sequence[str], rels: dict[str, int], k: int = 10) -> float:
    dcg = sum((2 ** rels.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum((2**r - 1) / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], rels: dict[str, int], k: int = 100) -> float:
    relevant = {d for d, r in rels.items() if r > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def mrr_at(ranked: Sequence[str], rels: dict[str, int], k: int = 10) -> float:
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
    """Run every query in each mode; documents rank by their best chunk."""
    flt = SearchFilter(collections=(collection,))
    out = []
    for mode in modes:
        nd, rc, mr, lat = [], [], [], []
        for n, (qid, text) in enumerate(data.queries.items(), start=1):
            t0 = time.perf_counter()
            result = searcher.search(text, k=_CHUNKS, mode=mode, flt=flt, snippets=False)
            lat.append((time.perf_counter() - t0) * 1000)
            ranked: list[str] = []
            for hit in result.hits:
                doc = names.get(Path(hit.path).name)
                if doc is not None and doc not in ranked:
                    ranked.append(doc)
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
