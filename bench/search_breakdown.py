"""Where a search's time goes: each part of the searcher and the store timed over real queries.

    python bench/search_breakdown.py --data-dir DIR [--mode hybrid] [--queries 200] [--no-snippets]

DIR is a kept index (for 100k chunks, `bench/search_bench.py --keep K` builds one in K/index; or
any `docshelf index` data dir). Each public step a search goes through is wrapped with a timer:
the store's calls, the query embedding, the dense index and its HNSW graph (dense.search minus
hnsw.search is resolving the graph's keys in SQLite), the other-language check, the fusion, the
analysis of hit texts (cached per text) and their snippets, the confidence. The figures are
milliseconds per search, summed over its calls. Parts overlap: in hybrid mode the query embedding
runs on a pool thread while the keyword side (and the analysis of its first hits) runs on the main
thread, and "candidates" holds both plus the dense side.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnxruntime  # noqa: F401  (before usearch, which otherwise breaks its import)

from docshelf.analyze.analyzer import Analyzer
from docshelf.config import load_settings
from docshelf.search import searcher as searcher_module
from docshelf.search.evaluate import percentile
from docshelf.search.hitterms import HitTerms
from docshelf.store.embedded import ann, dense
from docshelf.testing import Stages

ROOT = Path(__file__).resolve().parents[1]
spent: collections.Counter[str] = collections.Counter()
calls: collections.Counter[str] = collections.Counter()


def timed(owner: Any, name: str, label: str | None = None) -> None:
    inner: Callable[..., Any] = getattr(owner, name)
    key = label or name

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[key] += time.perf_counter() - started
            calls[key] += 1

    setattr(owner, name, wrapper)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", type=Path, required=True)
    p.add_argument("--model", default="e5")
    p.add_argument("--mode", default="hybrid", choices=["hybrid", "keyword", "semantic"])
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--no-snippets", action="store_true")
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    args = p.parse_args()
    print("$ python bench/search_breakdown.py " + " ".join(sys.argv[1:]))
    settings = load_settings()
    settings.store.data_dir = args.data_dir
    settings.embed.model = args.model
    runtime = Stages(settings)
    search = runtime.searcher()
    with (args.eval_data / "scifact" / "queries.jsonl").open(encoding="utf-8") as fh:
        queries = [json.loads(line)["text"] for line in fh][: args.queries]
    search.search(queries[0])  # the model and the vectors loaded before the clock
    timed(searcher_module.Searcher, "other_language", "other-language check")
    # the searcher calls these by its module's names, so they are timed there
    for name in ("fuse_hybrid", "make_snippet", "confidence", "nearest_neighbours", "respelled"):
        timed(searcher_module, name)
    store = type(search.store)
    for name in ("candidates", "get_chunks", "get_documents", "keyword_search", "keyword_coverage"):
        timed(store, name)
    timed(Analyzer, "tokens", "analyzer.tokens")
    timed(HitTerms, "tokens", "hit texts analysed")
    if search.embedder is not None:
        timed(type(search.embedder), "embed_query")
    timed(dense.DenseIndex, "search", "dense.search")
    timed(ann.Ann, "search", "hnsw.search")
    load = os.getloadavg()[0]
    latency = []
    for q in queries:
        started = time.perf_counter()
        search.search(q, k=10, mode=args.mode, snippets=not args.no_snippets)
        latency.append((time.perf_counter() - started) * 1000)
    print(f"{os.cpu_count()} cores, load average {load:.2f} -> {os.getloadavg()[0]:.2f}")
    print(f"{args.mode}, {len(queries)} queries: p50 {percentile(latency, 0.5):.1f} ms, "
          f"p95 {percentile(latency, 0.95):.1f} ms (timers included)")  # fmt: skip
    for key, seconds in spent.most_common():
        per, count = seconds / len(queries) * 1000, calls[key] / len(queries)
        print(f"  {key:20} {per:6.2f} ms/search  ({count:.1f} calls)")
    runtime.close()


if __name__ == "__main__":
    main()
