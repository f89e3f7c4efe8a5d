"""When each step of a hybrid search starts and ends, in ms from the call (medians over the queries).

    python bench/search_timeline.py --data-dir DIR [--queries 200] [--serial]

DIR is a kept index (`bench/search_bench.py --keep K` builds 100k chunks in K/index). Unlike
bench/search_breakdown.py (time summed per part), this shows what overlaps what: the query embedding
on its pool thread against the keyword side on the caller's, and what waits for the vector.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnxruntime  # noqa: F401  (before usearch, which otherwise breaks its import)

from docshelf.config import load_settings
from docshelf.embed import _e5_onnx
from docshelf.runtime import Runtime
from docshelf.search import searcher as searcher_module
from docshelf.store.embedded import search as store_search

ROOT = Path(__file__).resolve().parents[1]
marks: dict[str, float] = {}


def marked(owner: Any, name: str, tag: str) -> None:
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        marks[f"{tag} start"] = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            marks[f"{tag} end"] = time.perf_counter()

    setattr(owner, name, wrapper)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", type=Path, required=True)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--serial", action="store_true", help="search.parallel_query = false")
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    args = p.parse_args()
    print(f"$ python bench/search_timeline.py {' '.join(sys.argv[1:])}")
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    settings = load_settings()
    settings.store.data_dir = args.data_dir
    settings.embed.model = "e5"
    settings.search.parallel_query = not args.serial
    runtime = Runtime(settings)
    search = runtime.searcher()
    with (args.eval_data / "scifact" / "queries.jsonl").open(encoding="utf-8") as fh:
        queries = [json.loads(line)["text"] for line in fh][: args.queries + 10]
    for q in queries[-10:]:  # the model and the vectors loaded before the clock
        search.search(q)
    assert search.embedder is not None
    marked(type(search.embedder), "embed_query", "embedding")
    marked(_e5_onnx.OnnxEncoder, "__call__", "onnxruntime")
    marked(store_search.SQLiteSearch, "keyword_search", "keyword side")
    marked(store_search.SQLiteSearch, "vector_search", "dense side")
    marked(searcher_module.Searcher, "_fuse", "fusion")
    marked(searcher_module.Searcher, "_hydrate", "hydration")
    at: collections.defaultdict[str, list[float]] = collections.defaultdict(list)
    for q in queries[: args.queries]:
        marks.clear()
        started = time.perf_counter()
        search.search(q)
        ended = time.perf_counter()
        for tag, t in marks.items():
            at[tag].append((t - started) * 1000)
        at["result"].append((ended - started) * 1000)
    for tag in sorted(at, key=lambda t: statistics.median(at[t])):
        print(f"  {tag:<20} {statistics.median(at[tag]):6.1f} ms")
    runtime.close()


if __name__ == "__main__":
    main()
