"""MCP search round trip, no-op resync and edit-to-searchable against the number of indexed files.

    python bench/mcp_files_bench.py [--sizes 1000,20000,100000] [--queries 200] [--mode keyword]
                                    [--edits 5] [--keep DIR]

For each size a corpus of that many small Markdown files is written and indexed (hash embedder,
so the figures are the server's and the store's, not a model's): the first index and a no-op
resync through ``docshelf.Shelf`` (what `docshelf index` and MCP `reindex` run). Then
`python -m docshelf serve --watch` is spawned over stdio as a client would and timed with the
MCP SDK client: p50/p95 of ``--queries`` searches after a warm-up, once the watcher's catch-up
sync has finished (the p50 while it ran is printed too), then ``--edits`` one-file edits, each
timed from the write until a search finds its new word. ``--keep DIR`` keeps each corpus and
index and reuses them on the next run (the first index is then not timed). The freshness check runs in the
server as in real use. Targets (issues 14 and 19): p50 at 20,000 files within 1.5x of the figure
at 1,000, and at 100,000 files p50 <= 30 ms and a no-op resync <= 5 s on a quiet machine; the load
average is printed with every row.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

# a Zipf-like vocabulary, as in natural text: a few very common words, many rare ones
VOCAB = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "pu", "ri", "so", "tu", "ve", "zo") for b in range(2000)]
WEIGHTS = [1 / (rank + 10) for rank in range(len(VOCAB))]
QUERIES = ["ka5 lo7 mi40", "ne300 pu12", "ri999 so3 tu77", "ve1500 zo20 ka800", "lo2 mi1"]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def write_corpus(root: Path, files: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(files):
        folder = root / f"d{i // 1000:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        body = " ".join(rng.choices(VOCAB, WEIGHTS, k=60))
        (folder / f"note{i:06d}.md").write_text(f"# Note {i}\n\n{body} token{i}.\n", "utf-8")


def in_process(data: Path, queries: int, mode: str) -> float:
    """p50 of the same searches through Shelf in this process: the search itself, no server."""
    from docshelf.config import load_settings
    from docshelf.embed import HashEmbedder
    from docshelf.shelf import Shelf

    settings = load_settings()
    settings.store.data_dir = data
    times = []
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        for i in range(queries + 20):
            t0 = time.perf_counter()
            shelf.search(QUERIES[i % len(QUERIES)], k=8, mode=mode)
            if i >= 20:
                times.append((time.perf_counter() - t0) * 1000)
    return _percentile(times, 0.5)


def build(scratch: Path, files: int) -> tuple[Path, Path, float | None, float]:
    """Corpus and index in ``scratch`` (reused when a kept one is there: first index None)."""
    from docshelf.config import load_settings
    from docshelf.embed import HashEmbedder
    from docshelf.shelf import Shelf

    corpus, data = scratch / "corpus", scratch / "data"
    reuse = (data / "docshelf.db").is_file()
    if not reuse:
        write_corpus(corpus, files)
    settings = load_settings()
    settings.store.data_dir = data
    settings.embed.model = "hash"
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        started = time.perf_counter()
        first: float | None = None
        if not reuse:
            shelf.index([corpus], "bench")
            first = time.perf_counter() - started
        started = time.perf_counter()
        shelf.index([corpus], "bench")
        noop = time.perf_counter() - started
    return corpus, data, first, noop


def _synced(data: Path) -> int:
    """Syncs the server's watcher has finished (its health in the store's meta table)."""
    import json
    import sqlite3

    db = sqlite3.connect(f"file:{data / 'docshelf.db'}?mode=ro", uri=True, timeout=30)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'watch_health'").fetchone()
    finally:
        db.close()
    health = json.loads(row[0]) if row else {}
    return sum(int(h.get("syncs", 0)) for h in health.values())


async def measure(data: Path, corpus: Path, queries: int, mode: str, edits: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env["DOCSHELF_EMBED__MODEL"] = "hash"
    cmd = [sys.executable, "-m", "docshelf", "serve", "--data-dir", str(data), "--watch"]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    out: dict[str, float] = {}
    async with Client(params) as client:
        for q in QUERIES * 5:  # warm-up: the model, caches, the first freshness pass starting
            await client.call_tool("search", {"query": q, "k": 8, "mode": mode})
        times = []
        for i in range(queries):
            t0 = time.perf_counter()
            result = await client.call_tool(
                "search", {"query": QUERIES[i % len(QUERIES)], "k": 8, "mode": mode}
            )
            times.append((time.perf_counter() - t0) * 1000)
            assert not result.is_error, result.content
        out["start_p50"] = _percentile(times, 0.5)  # while the catch-up sync may still run
        while _synced(data) < 1:  # the watcher's catch-up sync at start
            await anyio.sleep(0.1)
        await anyio.sleep(2.0)  # the freshness thread's first pass over the documents
        times = []
        for i in range(queries):
            t0 = time.perf_counter()
            await client.call_tool("search", {"query": QUERIES[i % len(QUERIES)], "k": 8, "mode": mode})
            times.append((time.perf_counter() - t0) * 1000)
        out["p50"], out["p95"] = _percentile(times, 0.5), _percentile(times, 0.95)
        lags = []
        run = random.SystemRandom().randrange(1_000_000)
        for e in range(edits):
            # one token, no digits, new on every run (a kept corpus holds the words of earlier runs)
            word = "zqedit" + "".join(chr(ord("a") + int(d)) for d in f"{run:06d}{e:03d}")
            target = corpus / "d000" / f"note{e:06d}.md"
            t0 = time.perf_counter()
            target.write_text(target.read_text("utf-8") + f"\n{word}\n", "utf-8")
            while True:
                found = await client.call_tool("search", {"query": word, "k": 1, "mode": "keyword"})
                hits = (found.structured_content or {}).get("hits", [])
                if hits and hits[0]["citation"].split(":")[0].endswith(target.name):
                    break
                if time.perf_counter() - t0 > 300:
                    raise SystemExit(f"edit {e} not searchable after 300 s")
                await anyio.sleep(0.02)
            lags.append(time.perf_counter() - t0)
        if lags:
            out["edit_p50"] = _percentile(lags, 0.5)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,20000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--mode", default="keyword", choices=["keyword", "hybrid", "semantic"])
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="keep (and reuse) each corpus and index under this folder")
    args = parser.parse_args()
    print(
        f"$ python bench/mcp_files_bench.py --sizes {args.sizes} --queries {args.queries} --mode {args.mode} "
        f"--edits {args.edits}" + (f" --keep {args.keep}" if args.keep else "")
    )
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    rows = []
    for files in [int(s) for s in args.sizes.split(",")]:
        if args.keep:
            scratch = args.keep / f"files-{files}"
            scratch.mkdir(parents=True, exist_ok=True)
        else:
            scratch = Path(tempfile.mkdtemp(prefix="docshelf-filesbench-"))
        try:
            load_index = os.getloadavg()[0]
            corpus, data, first_s, noop_s = build(scratch, files)
            load_before = os.getloadavg()[0]
            m = anyio.run(measure, data, corpus, args.queries, args.mode, args.edits)
            rows.append((files, m["p50"]))
            edit = (
                f"; one-file edit to searchable (serve --watch) p50 {m['edit_p50']:.2f} s"
                if "edit_p50" in m
                else ""
            )
            first = "  kept" if first_s is None else f"{first_s:6.1f}"
            print(
                f"{files:>7} files: first index {first} s, no-op resync {noop_s:5.2f} s "
                f"(load {load_index:.2f}); MCP search p50 {m['p50']:6.1f} ms, p95 {m['p95']:6.1f} ms "
                f"(p50 {m['start_p50']:.1f} ms while the catch-up sync ran){edit} "
                f"(load {load_before:.2f} -> {os.getloadavg()[0]:.2f})",
                flush=True,
            )
        finally:
            if not args.keep:
                shutil.rmtree(scratch, ignore_errors=True)
    if len(rows) > 1:
        base = rows[0][1]
        for files, p50 in rows[1:]:
            print(f"p50 at {files} files / at {rows[0][0]} files: {p50 / base:.2f}x")


if __name__ == "__main__":
    main()
