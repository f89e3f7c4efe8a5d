"""MCP server latency over stdio: cold start -> tools/list, and search round-trips.

    python bench/server_bench.py [--model use] [--data-dir DIR] [--queries 50] [--mode auto|legacy]

Without --data-dir the sample corpus is indexed into a scratch folder with --model. Each run
spawns `python -m docshelf serve` the way an MCP client does, times process start to the
tools/list answer (target: initialize/discover < 1 s), the first search (which may wait for
the embedding model), then p50/p95 of --queries searches.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
QUERIES = [
    "how do I roll back a deploy",
    "Urlaubstage beantragen",
    "数据备份",
    "incident severity levels",
    "온보딩 첫 주",
    "style guide headings",
    "glossary SLA",
    "who approves production changes",
]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _measure(cmd: list[str], env: dict[str, str], queries: int, mode: str) -> None:
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    started = time.perf_counter()
    async with Client(params, mode=mode) as client:
        connected = time.perf_counter()
        protocol = client.protocol_version
        tools = await client.list_tools()
        listed = time.perf_counter()
        first = await client.call_tool("search", {"query": QUERIES[0], "k": 8})
        first_done = time.perf_counter()
        times = []
        for i in range(queries):
            t0 = time.perf_counter()
            result = await client.call_tool("search", {"query": QUERIES[i % len(QUERIES)], "k": 8})
            times.append((time.perf_counter() - t0) * 1000)
            assert not result.is_error, result.content
    mode_used = (first.structured_content or {}).get("mode")
    print(f"protocol {protocol}, {len(tools.tools)} tools")
    print(f"cold start -> connected:   {(connected - started) * 1000:7.0f} ms")
    print(f"cold start -> tools/list:  {(listed - started) * 1000:7.0f} ms")
    print(f"first search ({mode_used}):  {(first_done - listed) * 1000:7.0f} ms (waits for the model)")
    print(f"cold start -> first search: {(first_done - started) * 1000:5.0f} ms")
    print(
        f"search round-trip over {queries}: p50 {_percentile(times, 0.5):.1f} ms, "
        f"p95 {_percentile(times, 0.95):.1f} ms, mean {statistics.fmean(times):.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="use")
    parser.add_argument("--data-dir", type=Path, help="an existing index (default: index the samples)")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    args = parser.parse_args()

    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env["DOCSHELF_EMBED__MODEL"] = args.model
    scratch = None
    data = args.data_dir
    if data is None:
        scratch = Path(tempfile.mkdtemp(prefix="docshelf-serverbench-"))
        shutil.copytree(ROOT / "samples" / "corpus", scratch / "corpus")
        data = scratch / "data"
        subprocess.run(
            [sys.executable, "-m", "docshelf", "index", str(scratch / "corpus"), "--data-dir", str(data)],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
    cmd = [sys.executable, "-m", "docshelf", "serve", "--data-dir", str(data), "--read-only"]
    try:
        anyio.run(_measure, cmd, env, args.queries, args.mode)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
