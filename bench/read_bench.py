"""Reading pages of a long PDF over MCP, as an agent does: `read_document(path, page=N)` against
`docshelf serve` over stdio, this checkout against another one in the same run.

    python bench/read_bench.py --baseline-src OTHER/src [--pages 500] [--reads 12] [--rounds 3]

A PDF of --pages pages (45 lines of text each, written by the tests' PDF maker) is indexed once
into a scratch folder with the hash embedder (the figures are the reads', not a model's). Then,
--rounds times and alternated, each checkout's server is started (PYTHONPATH picks the code) and
asked for --reads different pages, one after another: the first read, and the median of the
others. Each read parses the file again so that its offsets and lines equal the citations; the
ratio this / baseline of each figure is printed with the command, the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from machine import cpu, load
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("alpha", "beta", "gamma", "delta", "incident", "pager", "deploy", "rollback", "budget", "error",
         "cluster", "node", "service")  # fmt: skip


def write_pdf(path: Path, pages: int) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_formats import make_pdf

    rng = random.Random(7)
    lines = [[" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(45)] for _ in range(pages)]
    path.write_bytes(make_pdf(lines))


async def reads(data: Path, src: Path, pages: list[int]) -> list[float]:
    """Milliseconds of each `read_document` call, in order, from a fresh server of ``src``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(DOCSHELF_EMBED__MODEL="hash", PYTHONPATH=str(src))
    cmd = [sys.executable, "-m", "docshelf", "serve", "--data-dir", str(data)]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    out = []
    async with Client(params) as client:
        await client.call_tool("index_status", {})  # started and the index open before any read
        for page in pages:
            t0 = time.perf_counter()
            got = await client.call_tool("read_document", {"document": "manual.pdf", "page": page})
            out.append((time.perf_counter() - t0) * 1000)
            assert not got.is_error and f"#page={page}" in str(got.structured_content), got.content
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-src", type=Path, required=True, help="src folder of another checkout")
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--reads", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print("command: python bench/read_bench.py " + " ".join(sys.argv[1:]))
    print(f"machine: {cpu()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}; {load()}")
    checkouts = {"baseline": args.baseline_src.resolve(), "this": ROOT / "src"}
    with tempfile.TemporaryDirectory(prefix="docshelf-read-bench-") as scratch:
        folder, data = Path(scratch) / "docs", Path(scratch) / "data"
        folder.mkdir()
        write_pdf(folder / "manual.pdf", args.pages)
        env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
        env.update(DOCSHELF_EMBED__MODEL="hash", PYTHONPATH=str(ROOT / "src"))
        subprocess.run([sys.executable, "-m", "docshelf", "index", str(folder), "--data-dir", str(data)],
                       env=env, check=True, capture_output=True)  # fmt: skip
        pages = random.Random(3).sample(range(1, args.pages + 1), args.reads)
        first: dict[str, list[float]] = {name: [] for name in checkouts}
        rest: dict[str, list[float]] = {name: [] for name in checkouts}
        for r in range(args.rounds):
            for name in sorted(checkouts, reverse=r % 2 == 1):  # alternated: neither always goes first
                times = anyio.run(reads, data, checkouts[name], pages)
                first[name].append(times[0])
                rest[name].append(statistics.median(times[1:]))
                print(f"  round {r + 1} {name}: first {times[0]:.0f} ms, then median "
                      f"{statistics.median(times[1:]):.1f} ms; {load()}", flush=True)  # fmt: skip
    print(f"{args.pages}-page PDF, {args.reads} pages read per server, medians of {args.rounds} rounds:")
    for label, figures in (("first read", first), ("later reads", rest)):
        base, this = statistics.median(figures["baseline"]), statistics.median(figures["this"])
        print(f"  {label}: baseline {base:.1f} ms, this {this:.1f} ms, ratio {this / base:.3f}")
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
