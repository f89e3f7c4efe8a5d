"""Start to tools/list: `docshelf serve` against the SDK's barest server, alternated.

    python bench/startup_bench.py [--runs 10] [--data-dir DIR] [--model e5]

Each run spawns the server the way an MCP client does (stdio), initializes and asks for
tools/list; the two commands alternate so a change in the machine's load hits both. Without
--data-dir the sample corpus is indexed into a scratch folder with --model first. Prints each
median, their difference (target: docshelf <= bare + 0.2 s) and the machine's load.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
BARE = ROOT / "bench" / "compare_parts" / "bare_mcp_server.py"


async def _listed(cmd: list[str], env: dict[str, str]) -> float:
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    started = time.perf_counter()
    async with Client(params) as client:
        assert (await client.list_tools()).tools
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--model", default="e5")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env["DOCSHELF_EMBED__MODEL"] = args.model
    data = args.data_dir or Path(tempfile.mkdtemp(prefix="docshelf-startup-")) / "data"
    if not (data / "docshelf.db").exists():
        corpus = str(ROOT / "samples" / "corpus")
        index = [sys.executable, "-m", "docshelf", "index", corpus, "--data-dir", str(data)]
        subprocess.run(index, env=env, check=True, capture_output=True)
    commands = {
        "docshelf serve": [sys.executable, "-m", "docshelf", "serve", "--data-dir", str(data)],
        "bare SDK server": [sys.executable, str(BARE)],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    load_before = os.getloadavg()
    for _ in range(args.runs):
        for name, cmd in commands.items():
            times[name].append(anyio.run(_listed, cmd, env))
    load_after = os.getloadavg()
    print(f"command: python {' '.join(sys.argv)}")
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"
    print(f"machine: {machine}, python {platform.python_version()}; load {load_before[0]:.1f} before, "
          f"{load_after[0]:.1f} after")  # fmt: skip
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        print(f"{name:16s} start -> tools/list: median {medians[name]:.3f} s "
              f"(min {min(values):.3f}, max {max(values):.3f}, {len(values)} runs)")  # fmt: skip
    gap = medians["docshelf serve"] - medians["bare SDK server"]
    print(f"docshelf - bare: {gap:+.3f} s (target <= +0.200 s)")


if __name__ == "__main__":
    main()
