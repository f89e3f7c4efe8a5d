"""docshelf as the bench runs it: its own interpreter, its public pipeline (files -> sync -> search)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from common import DIM, dir_bytes, iter_corpus, peak_rss_mb, ranked_docs, synthetic_vector

from docshelf.config import Settings, load_settings
from docshelf.embed.base import Vectors
from docshelf.search.evaluate import EvalSet, file_name, write_corpus
from docshelf.search.searcher import Mode, Searcher, SearchResult
from docshelf.store.base import SearchFilter
from docshelf.testing import Stages

CHUNKS = 300  # chunks fetched per query: enough for 100 distinct documents (as `docshelf eval`)


def _settings(data_dir: Path, model: str, workers: int = 1) -> Settings:
    settings = load_settings()
    settings.store.data_dir = data_dir
    settings.embed.model = model
    settings.embed.threads, settings.embed.workers = 1, workers  # one core per worker
    return settings


def run_throughput(job: dict[str, Any]) -> dict[str, Any]:
    """Index the corpus as files with ``job["cores"]`` embedding workers; indexing time only."""
    work = Path(job["work"])
    corpus = {d: (t, x) for d, t, x in iter_corpus(Path(job["corpus"]))}
    write_corpus(EvalSet("bench", corpus, {}, {}), work / "corpus")
    rt = Stages(_settings(work / "index", job["model"], job["cores"]))
    try:
        rt.embedder.embed_documents(["warm-up", "the workers start"])  # model load is not indexing
        t0 = time.perf_counter()
        rt.indexer().sync("bench", [work / "corpus"])
        return {"index_s": time.perf_counter() - t0, "docs": len(corpus), "units": rt.store.stats().chunks}
    finally:
        rt.close()


def run_eval(job: dict[str, Any]) -> dict[str, Any]:
    work = Path(job["work"])
    corpus = {d: (t, x) for d, t, x in iter_corpus(Path(job["corpus"]))}
    names = write_corpus(EvalSet("bench", corpus, {}, {}), work / "corpus")
    rt = Stages(_settings(work / "index", job["model"]))
    try:
        rt.embedder.embed_query("warm-up")  # model load is a cold-start cost, not indexing
        t0 = time.perf_counter()
        rt.indexer().sync("bench", [work / "corpus"])
        index_s = time.perf_counter() - t0
        searcher = rt.searcher()
        flt = SearchFilter(collections=("bench",))
        search = _rerank_search(rt, job.get("rerank_model"))
        runs = []
        for mode in job["modes"]:
            rankings: dict[str, list[str]] = {}
            latency: list[float] = []
            for qid, text in job["queries"].items():
                t = time.perf_counter()
                if mode == "hybrid+rerank":
                    result = search(searcher, text, flt)
                else:
                    result = searcher.search(text, k=CHUNKS, mode=mode, flt=flt, snippets=False)
                latency.append((time.perf_counter() - t) * 1000)
                docs = [names.get(Path(h.path).name, "") for h in result.hits]
                rankings[qid] = ranked_docs([d for d in docs if d])
            runs.append({"mode": mode, "rankings": rankings, "latency_ms": latency})
        stats = rt.store.stats()
        return {
            "index_s": index_s,
            "docs": len(corpus),
            "units": stats.chunks,
            "unit": "chunks",
            "disk_bytes": dir_bytes(work / "index"),
            "peak_rss_mb": peak_rss_mb(),
            "model": rt.embedder.name,
            "runs": runs,
        }
    finally:
        rt.close()


def _rerank_search(rt: Stages, spec: str | None) -> Callable[[Searcher, str, SearchFilter], SearchResult]:
    """Hybrid search with the top hits re-scored by a cross-encoder (`docshelf search --rerank`)."""
    if not spec:
        return lambda searcher, text, flt: searcher.search(text, k=CHUNKS, mode="hybrid", flt=flt)
    from docshelf.search.rerank import get_reranker, reranked_search

    rt.settings.rerank.model = spec
    reranker = get_reranker(rt.settings.rerank)
    top_n = rt.settings.rerank.top_n
    return lambda searcher, text, flt: reranked_search(
        searcher, reranker, text, CHUNKS, top_n, mode="hybrid", flt=flt, snippets=False
    )


class SyntheticEmbedder:
    """Scale runs only: the bench's clustered synthetic vectors instead of a model."""

    name = "bench-synthetic-384"
    dim = DIM
    max_tokens = 512
    fusion_weight = 0.5

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return np.stack([synthetic_vector(t) for t in texts]) if texts else np.zeros((0, DIM), np.float32)

    def embed_query(self, text: str) -> Vectors:
        return synthetic_vector(text)


def run_scale(job: dict[str, Any], units: list[str]) -> dict[str, Any]:
    """Index `units` as Markdown files (one `##` section per chunk, 10 a file), then time searches."""
    work = Path(tempfile.mkdtemp(dir=job["work"]))
    corpus = work / "corpus"
    for start in range(0, len(units), 10):
        folder = corpus / f"d{start // 10_000:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        parts = "".join(f"## Part {start + i}\n\n{u}\n\n" for i, u in enumerate(units[start : start + 10]))
        body = f"---\nrag_chunk: headings\n---\n{parts}"
        (folder / file_name(f"doc{start}")).write_text(body, encoding="utf-8")
    rt = Stages(_settings(work / "index", "hash"), embedder=SyntheticEmbedder())
    try:
        t0 = time.perf_counter()
        rt.indexer().sync("scale", [corpus])
        build_s = time.perf_counter() - t0
        searcher = rt.searcher()
        searcher.search(job["queries"][0], mode="hybrid")  # opens the vector matrix / HNSW index
        modes: tuple[Mode, ...] = ("keyword", "semantic", "hybrid")
        latency: dict[str, list[float]] = {}
        for mode in modes:
            lat = latency.setdefault({"semantic": "vector"}.get(mode, mode), [])
            for text in job["queries"]:
                t = time.perf_counter()
                searcher.search(text, k=10, mode=mode, snippets=False)
                lat.append((time.perf_counter() - t) * 1000)
        return {
            "build_s": build_s,
            "units": rt.store.stats().chunks,
            "disk_bytes": dir_bytes(work / "index"),
            "peak_rss_mb": peak_rss_mb(),
            "latency_ms": latency,
        }
    finally:
        rt.close()
        shutil.rmtree(work, ignore_errors=True)
