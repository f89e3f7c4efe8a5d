"""A million chunks through the real path: build, disk, MCP and Shelf latency, ANN recall, RSS.

    python bench/scale_bench.py [--chunks 1000000] [--work /tmp/docshelf-scale] [--queries 300]
                                [--keep] [--write-docs]

The store: a real-text share copied as it is (the scifact and nfcorpus eval indexes, e5, in the
bench/eval_all.py layout under --eval-work, built when missing, plus ../shared/realdocs indexed
with e5), then synthetic growth up to --chunks (bench/synthetic.py: copies with rotated sentences
and perturbed real vectors). Each phase runs in its own process, so each RSS figure is that
process's own: the build (copy + growth + keyword commit + HNSW build, peak RSS = VmHWM), a
real `docshelf serve --read-only` answering an MCP SDK client over stdio (its VmHWM after all
queries), and `docshelf.Shelf` in a fresh interpreter. Latency is per query over --queries
scifact test queries, k=10, snippets on, after 20 warm-up queries; recall@10 compares the
store's dense path with an exact float32 scan of every stored vector. Load averages are printed
with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODES = ("keyword", "semantic", "hybrid")


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def settings_for(data_dir: Path, model: str = "e5") -> Any:
    from docshelf.config import load_settings

    s = load_settings()
    s.store.data_dir = data_dir
    s.embed.model = model
    s.search.ann_threads = 2
    return s


def queries(eval_data: Path, n: int) -> list[str]:
    with (eval_data / "scifact" / "queries.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line)["text"] for line in fh][:n]


def percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]  # noqa: E731
    return pick(0.5), pick(0.95)


def rss_of(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak) of a process in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


# ----- bases: the real-text share -----
def bases(args: argparse.Namespace) -> list[Path]:
    """Data dirs of the real indexes (built when missing; e5 at its indexing speed)."""
    from docshelf.search.evaluate import load_beir, write_corpus
    from docshelf.testing import Stages

    out = []
    for name in ("scifact", "nfcorpus"):
        folder = args.eval_work / f"e5-{name}"
        if not (folder / "index" / "docshelf.db").exists():
            print(f"building the {name} e5 index under {folder} ({load()})", flush=True)
            data = load_beir(args.eval_data / name, "test")
            write_corpus(data, folder / "corpus")
            with Stages(settings_for(folder / "index")) as rt:
                rt.indexer().sync("eval", [folder / "corpus"])
        out.append(folder / "index")
    real = args.work / "realdocs-index"
    if args.realdocs.is_dir() and not (real / "docshelf.db").exists():
        print(f"indexing {args.realdocs} with e5 ({load()})", flush=True)
        with Stages(settings_for(real)) as rt:
            rt.indexer().sync("realdocs", [args.realdocs])
    if (real / "docshelf.db").exists():
        out.append(real)
    return out


# ----- phases (each in its own process) -----
def phase_build(args: argparse.Namespace) -> dict[str, Any]:
    import synthetic

    from docshelf.store.copy import copy_store
    from docshelf.testing import Stages

    target = Stages(settings_for(args.work / "index"))
    sources = [Stages(settings_for(Path(p))) for p in args.bases]
    try:
        t0 = time.perf_counter()
        real = sum(copy_store(src.store, target.store).chunks for src in sources)
        copied_s = time.perf_counter() - t0
        target.store.set_collection_roots("scale", ["/synthetic"])
        grown, todo = 0, args.chunks - real
        growers = sources[:2]  # the eval sets: many short documents
        for i, src in enumerate(growers):
            share = todo - grown if i == len(growers) - 1 else todo // len(growers)
            grown += synthetic.grow(src.store, target.store, target.embedder.dim, share, tag=f"g{i}-")
        insert_s = time.perf_counter() - t0
        target.store.commit()  # tantivy commit + HNSW build
        target.store.checkpoint()
        total_s = time.perf_counter() - t0
        return {
            "chunks": target.store.stats().chunks, "real_chunks": real, "copy_s": copied_s,
            "insert_s": insert_s, "commit_s": total_s - insert_s, "build_s": total_s,
            "peak_rss_mb": rss_of(os.getpid())["VmHWM"], "load": load(),
        }  # fmt: skip
    finally:
        target.close()
        for src in sources:
            src.close()


def phase_shelf(args: argparse.Namespace) -> dict[str, Any]:
    from docshelf.shelf import Shelf

    qs = queries(args.eval_data, args.queries)
    out: dict[str, Any] = {}
    with Shelf(settings_for(args.work / "index")) as shelf:
        for q in qs[:20]:
            shelf.search(q, k=10, model_wait_s=300)  # the model loads in the background
        for mode in MODES:
            lat = []
            for q in qs:
                t = time.perf_counter()
                shelf.search(q, k=10, mode=mode)
                lat.append((time.perf_counter() - t) * 1000)
            out[mode] = percentiles(lat)
        out["rss"] = rss_of(os.getpid())
    out["load"] = load()
    return out


def phase_recall(args: argparse.Namespace) -> dict[str, Any]:
    """Top-10 overlap of the store's dense path (HNSW + exact rows) with an exact float32 scan."""
    import sqlite3

    import numpy as np

    from docshelf.store.base import SearchFilter
    from docshelf.testing import Stages

    qs = queries(args.eval_data, 200)
    with Stages(settings_for(args.work / "index")) as rt:
        vecs = np.stack([rt.embedder.embed_query(q) for q in qs])
        t = time.perf_counter()
        got = [{c for c, _ in rt.store.vector_search(v, 10, SearchFilter())} for v in vecs]
        ann_ms = (time.perf_counter() - t) * 1000 / len(qs)
        dense = rt.store.dense  # type: ignore[attr-defined]  (brought up to date by the searches above)
        in_file = len(dense.ann) if dense.ann is not None else 0
    db = sqlite3.connect(args.work / "index" / "docshelf.db")
    cursor = db.execute(
        "SELECT c.id, v.vector FROM chunks c JOIN vectors v ON v.key = c.embed_key JOIN documents d "
        "ON d.id = c.doc_id WHERE d.lifecycle IS NOT 'superseded'"
    )
    best_s = np.full((len(qs), 10), -2.0, dtype=np.float32)
    best_id = np.full((len(qs), 10), "", dtype=object)
    while rows := cursor.fetchmany(50_000):
        block = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
        ids = np.array([r[0] for r in rows], dtype=object)
        scores = np.concatenate([best_s, vecs @ block.T], axis=1)
        pool = np.concatenate([best_id, np.broadcast_to(ids, (len(qs), len(ids)))], axis=1)
        top = np.argsort(-scores, axis=1, kind="stable")[:, :10]
        best_s = np.take_along_axis(scores, top, axis=1)
        best_id = np.take_along_axis(pool, top, axis=1)
    db.close()
    recall = float(np.mean([len(g & set(e)) / 10 for g, e in zip(got, best_id, strict=True)]))
    return {"recall10": recall, "dense_ms": ann_ms, "in_hnsw": in_file, "load": load()}


async def _mcp(args: argparse.Namespace) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(DOCSHELF_EMBED__MODEL="e5", DOCSHELF_SERVER__MODEL_WAIT_S="300")
    data = str(args.work / "index")
    cmd = [sys.executable, "-m", "docshelf", "serve", "--data-dir", data, "--read-only"]
    qs = queries(args.eval_data, args.queries)
    out: dict[str, Any] = {}
    started = time.perf_counter()
    async with Client(StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)) as client:
        out["start_to_ready_s"] = time.perf_counter() - started
        for q in qs[:20]:  # the model, the page cache
            await client.call_tool("search", {"query": q, "k": 10})
        for mode in MODES:
            lat = []
            for q in qs:
                t = time.perf_counter()
                result = await client.call_tool("search", {"query": q, "k": 10, "mode": mode})
                lat.append((time.perf_counter() - t) * 1000)
                assert not result.is_error and result.structured_content["mode"] == mode, result.content
            out[mode] = percentiles(lat)
            out[f"{mode}_load"] = load()
        out["rss"] = _server_rss(data)
    return out


def _server_rss(data: str) -> dict[str, float]:
    for status in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmdline = status.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in cmdline and data.encode() in cmdline:
            return rss_of(int(status.parent.name))
    return {}


def in_child(phase: str, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--phase", phase, "--work", str(args.work), "--chunks",
           str(args.chunks), "--queries", str(args.queries), "--eval-data", str(args.eval_data),
           "--bases", *map(str, args.bases)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"phase {phase} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def disk(folder: Path) -> dict[str, float]:
    sizes = {"docshelf.db": 0.0, "keyword/": 0.0, "HNSW file": 0.0, "total": 0.0}
    for p in folder.rglob("*"):
        if p.is_file():
            mb = p.stat().st_size / 1e6
            sizes["total"] += mb
            if p.name.startswith("docshelf.db"):
                sizes["docshelf.db"] += mb
            elif "keyword" in p.parts:
                sizes["keyword/"] += mb
            elif p.suffix == ".usearch":
                sizes["HNSW file"] += mb
    return sizes


def report(args: argparse.Namespace) -> list[str]:
    import anyio

    lines = [f"$ python bench/scale_bench.py --chunks {args.chunks} --queries {args.queries}",
             f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
             f"{load()} at start"]  # fmt: skip
    args.bases = bases(args)
    if not (args.work / "index" / "docshelf.db").exists():
        b = in_child("build", args)
        lines.append(
            f"build: {b['chunks']:,} chunks ({b['real_chunks']:,} real: scifact, nfcorpus, realdocs) in "
            f"{b['build_s'] / 60:.1f} min (copy {b['copy_s']:.0f} s, inserts {b['insert_s'] / 60:.1f} min, "
            f"keyword commit + HNSW build {b['commit_s'] / 60:.1f} min); peak RSS {b['peak_rss_mb']:.0f} MB "
            f"({b['load']})"
        )
        print(lines[-1], flush=True)
    if args.build_only:
        return lines
    d = disk(args.work / "index")
    lines.append("disk: " + ", ".join(f"{k} {v:,.0f} MB" for k, v in d.items()))
    m = anyio.run(_mcp, args)
    for mode in MODES:
        p50, p95 = m[mode]
        lines.append(f"MCP search {mode:<8}: p50 {p50:6.1f} ms, p95 {p95:6.1f} ms ({m[f'{mode}_load']})")
        print(lines[-1], flush=True)
    lines.append(
        f"MCP server: ready in {m['start_to_ready_s']:.1f} s; RSS {m['rss'].get('VmRSS', 0):.0f} MB after "
        f"{args.queries * 3 + 20} searches, peak {m['rss'].get('VmHWM', 0):.0f} MB"
    )
    s = in_child("shelf", args)
    for mode in MODES:
        p50, p95 = s[mode]
        lines.append(f"Shelf.search {mode:<8}: p50 {p50:6.1f} ms, p95 {p95:6.1f} ms ({s['load']})")
    lines.append(f"Shelf process: RSS {s['rss']['VmRSS']:.0f} MB, peak {s['rss']['VmHWM']:.0f} MB")
    r = in_child("recall", args)
    lines.append(
        f"dense recall@10 vs exact float32 scan: {r['recall10']:.3f} over 200 queries "
        f"({r['in_hnsw']:,} vectors in the int8 HNSW file, the rest scanned exactly; "
        f"{r['dense_ms']:.1f} ms per dense search; {r['load']})"
    )
    return lines


def write_docs(lines: list[str]) -> None:
    path = ROOT / "docs" / "benchmarks.md"
    text = path.read_text(encoding="utf-8")
    body = "<!-- scale -->\n```\n" + "\n".join(lines) + "\n```\n<!-- /scale -->"
    pattern = re.compile(r"<!-- scale -->.*?<!-- /scale -->", re.S)
    text = pattern.sub(lambda _: body, text) if pattern.search(text) else text.rstrip() + "\n\n" + body + "\n"
    path.write_text(text, encoding="utf-8")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--chunks", type=int, default=1_000_000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-scale"))
    p.add_argument("--eval-work", type=Path, default=Path("/tmp/docshelf-eval"))
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    p.add_argument("--realdocs", type=Path, default=ROOT.parent / "shared" / "realdocs" / "files")
    p.add_argument("--keep", action="store_true", help="keep the built store (a rerun only measures)")
    p.add_argument("--build-only", action="store_true", help="build the store and keep it (no measuring)")
    p.add_argument("--write-docs", action="store_true")
    p.add_argument("--phase", choices=["build", "shelf", "recall"], help=argparse.SUPPRESS)
    p.add_argument("--bases", nargs="*", type=Path, default=[], help=argparse.SUPPRESS)
    args = p.parse_args()
    sys.path.insert(0, str(HERE))
    if args.phase:
        result = {"build": phase_build, "shelf": phase_shelf, "recall": phase_recall}[args.phase](args)
        print(json.dumps(result))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    try:
        lines = report(args)
    finally:
        if not (args.keep or args.build_only):
            shutil.rmtree(args.work / "index", ignore_errors=True)
    lines.append(f"{load()} at the end")
    print("\n".join(lines))
    if args.write_docs:
        write_docs(lines)


if __name__ == "__main__":
    main()
