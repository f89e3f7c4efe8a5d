"""Search latency at scale: a synthetic store of N chunks grown from the scifact eval index.

    python bench/search_bench.py [--chunks 100000] [--work /tmp/docshelf-eval]

Needs the scifact index that `python bench/eval_all.py --sets scifact` leaves in
--work (real text, real vectors of --model). Copies of each document get rotated
sentences and slightly perturbed vectors until the store holds --chunks chunks.
Prints keyword / semantic / hybrid p50 and p95 (query embedding included, first
model load excluded), ANN recall@10 against the exact scan, and build times.
Targets: hybrid p50 <= 15 ms, p95 <= 40 ms at 100k chunks.

    python bench/search_bench.py --reuse /tmp/s100k --modes hybrid

times a store kept by --keep again without building it: run it in turns with another checkout's
code (`PYTHONPATH=OTHER/src`) for a before/after ratio on one store and one machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import synthetic

from docshelf.config import load_settings
from docshelf.search.evaluate import percentile
from docshelf.search.searcher import Mode, Searcher
from docshelf.store.base import SearchFilter
from docshelf.testing import Stages

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--chunks", type=int, default=100_000)
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--model", default="e5")
    p.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="build the store in this folder and keep it (for bench/search_breakdown.py)",
    )
    p.add_argument("--reuse", type=Path, default=None, help="time the store kept in this folder (no build)")
    p.add_argument("--modes", nargs="*", default=["keyword", "semantic", "hybrid"])
    args = p.parse_args()
    if args.reuse:
        reuse(args)
        return

    base_settings = load_settings()
    base_settings.store.data_dir = args.work / f"{args.model}-scifact" / "index"
    base_settings.embed.model = args.model
    if not (base_settings.store.data_dir / "docshelf.db").exists():
        raise SystemExit(
            f"run `python bench/eval_all.py --model {args.model} --sets scifact` first "
            "(it builds the base index)"
        )
    base = Stages(base_settings)
    work = args.keep or Path(tempfile.mkdtemp(prefix="docshelf-scale-"))
    if args.keep and (work / "index").exists():
        raise SystemExit(f"{work / 'index'} exists; remove it or pick another --keep folder")
    settings = load_settings()
    settings.store.data_dir = work / "index"
    settings.embed.model = args.model
    rt = Stages(settings)
    try:
        rt.store.set_collection_roots("scale", [str(work)])
        rt.store.set_model(rt.embedder.name, rt.embedder.dim)
        t0 = time.perf_counter()
        total = synthetic.grow(base.store, rt.store, rt.embedder.dim, args.chunks)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        rt.store.commit()  # keyword commit + ANN build
        commit_s = time.perf_counter() - t0
        print(f"store: {total} chunks; insert {load_s:.0f}s, commit (tantivy + ANN build) {commit_s:.0f}s")

        with (args.eval_data / "scifact" / "queries.jsonl").open(encoding="utf-8") as fh:
            queries = [json.loads(line)["text"] for line in fh][: args.queries]
        searcher = rt.searcher()
        searcher.search(queries[0])  # loads the model and the vector matrix
        # the embedded store's dense side, brought up to date by the search above
        dense = rt.store.dense  # type: ignore[attr-defined]
        in_file = len(dense.ann) if dense.ann is not None else 0
        print(f"vector search: {f'HNSW (usearch) file of {in_file} vectors' if in_file else 'exact numpy'}, "
              "the rest exact")  # fmt: skip
        for snippets in (True, False):
            timed(searcher, queries, args.modes, snippets)
        if in_file:
            db = sqlite3.connect(f"file:{settings.store.data_dir / 'docshelf.db'}?mode=ro", uri=True)
            sql = "SELECT c.id, v.vector FROM chunks c JOIN vectors v ON v.key = c.embed_key"
            rows = db.execute(sql).fetchall()
            db.close()
            ids = [r[0] for r in rows]
            matrix = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
            recalls = []
            for q in queries[:200]:
                v = rt.embedder.embed_query(q)
                exact = {ids[i] for i in np.argsort(-(matrix @ v))[:10]}
                got = {c for c, _ in rt.store.vector_search(v, 10, SearchFilter())}
                recalls.append(len(exact & got) / 10)
            print(f"ANN recall@10 vs exact: {statistics.mean(recalls):.3f}")
        print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    finally:
        rt.close()
        base.close()
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def timed(searcher: Searcher, queries: list[str], modes: list[Mode], snippets: bool) -> None:
    for mode in modes:
        lat = []
        for q in queries:
            t = time.perf_counter()
            searcher.search(q, k=10, mode=mode, snippets=snippets)
            lat.append((time.perf_counter() - t) * 1000)
        print(f"{mode:<8} k=10 snippets={snippets!s:<5}: p50 {percentile(lat, 0.5):6.1f} ms, "
              f"p95 {percentile(lat, 0.95):6.1f} ms")  # fmt: skip


def reuse(args: argparse.Namespace) -> None:
    """Time the kept store at ``args.reuse`` (its keyword side re-derived first if another analyzer
    built it, as a writable open does)."""
    from docshelf.shelf.opening import repair_keywords

    settings = load_settings()
    settings.store.data_dir = args.reuse / "index"
    settings.embed.model = args.model
    with Stages(settings) as rt:
        repair_keywords(rt.store)
        with (args.eval_data / "scifact" / "queries.jsonl").open(encoding="utf-8") as fh:
            every = [json.loads(line)["text"] for line in fh]
        queries = every[: args.queries]
        searcher = rt.searcher()
        for q in every[-20:]:  # the model, the vector matrix; not the timed ones (their vectors are kept)
            searcher.search(q)
        print(f"{rt.store.stats().chunks} chunks, load {os.getloadavg()[0]:.1f}")
        timed(searcher, queries, args.modes, True)


if __name__ == "__main__":
    main()
