"""MCP search round trip against the number of indexed files, through a real MCP client.

    python bench/mcp_files_bench.py [--sizes 1000,20000,100000] [--queries 200] [--mode keyword]

For each size a corpus of that many small Markdown files is written and indexed (hash embedder,
so the figures are the server's and the store's, not a model's), then `python -m docshelf serve`
is spawned over stdio as a client would and timed with the MCP SDK client: p50/p95 of
``--queries`` searches after a warm-up. The freshness check runs in the server as in real use.
The issue's target: p50 at 20,000 files within 1.5x of the figure at 1,000, and <= 30 ms at
100,000 on a quiet machine; the load average is printed with every row.
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


def build(scratch: Path, files: int) -> tuple[Path, float]:
    from docshelf.config import load_settings
    from docshelf.embed import HashEmbedder
    from docshelf.shelf import Shelf

    corpus, data = scratch / "corpus", scratch / "data"
    write_corpus(corpus, files)
    settings = load_settings()
    settings.store.data_dir = data
    settings.embed.model = "hash"
    started = time.perf_counter()
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([corpus], "bench")
    return data, time.perf_counter() - started


async def measure(data: Path, queries: int, mode: str) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env["DOCSHELF_EMBED__MODEL"] = "hash"
    cmd = [sys.executable, "-m", "docshelf", "serve", "--data-dir", str(data), "--read-only"]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
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
    return _percentile(times, 0.5), _percentile(times, 0.95)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,20000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--mode", default="keyword", choices=["keyword", "hybrid", "semantic"])
    args = parser.parse_args()
    print(
        f"$ python bench/mcp_files_bench.py --sizes {args.sizes} --queries {args.queries} --mode {args.mode}"
    )
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    rows = []
    for files in [int(s) for s in args.sizes.split(",")]:
        scratch = Path(tempfile.mkdtemp(prefix="docshelf-filesbench-"))
        try:
            data, build_s = build(scratch, files)
            load_before = os.getloadavg()[0]
            p50, p95 = anyio.run(measure, data, args.queries, args.mode)
            shelf_p50 = in_process(data, args.queries, args.mode)
            rows.append((files, build_s, p50, p95, load_before, os.getloadavg()[0]))
            print(
                f"{files:>7} files: index {build_s:6.1f} s; MCP search p50 {p50:6.1f} ms, p95 {p95:6.1f} ms; "
                f"Shelf.search p50 {shelf_p50:5.1f} ms (load {load_before:.2f} -> {os.getloadavg()[0]:.2f})",
                flush=True,
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if len(rows) > 1:
        base = rows[0][2]
        for files, _, p50, _, _, _ in rows[1:]:
            print(f"p50 at {files} files / at {rows[0][0]} files: {p50 / base:.2f}x")


if __name__ == "__main__":
    main()
