"""MCP cold start: process start -> tools/list, and -> first search answer (model load included)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
QUERY = "how do I roll back a deploy"


async def _once(
    cmd: list[str], env: dict[str, str], tool: str, args: dict[str, object]
) -> tuple[float, float]:
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    started = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        listed = time.perf_counter()
        result = await client.call_tool(tool, args)
        done = time.perf_counter()
        if result.is_error:
            raise RuntimeError(f"{cmd[-1]}: {result.content}")
    return (listed - started) * 1000, (done - started) * 1000


def _import_ms(python: str, module: str, env: dict[str, str]) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print((time.perf_counter() - t) * 1000)"
    out = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


@dataclass
class _Server:
    label: str
    python: str
    cmd: list[str]
    env: dict[str, str]
    tool: str
    args: dict[str, object]
    module: str  # the heavy import, timed on its own


def measure(work: Path, bench_python: str | None, repeats: int) -> list[dict[str, object]]:
    """One row per server: median over `repeats` fresh processes, on the sample corpus."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    corpus = ROOT / "samples" / "corpus"
    servers: list[_Server] = []
    for model in ("e5", "use"):
        data = work / f"docshelf-{model}"
        menv = {**env, "DOCSHELF_EMBED__MODEL": model}
        subprocess.run(
            [sys.executable, "-m", "docshelf", "index", str(corpus), "--data-dir", str(data)],
            env=menv,
            check=True,
            capture_output=True,
        )
        cmd = [sys.executable, "-m", "docshelf", "serve", "--data-dir", str(data), "--read-only"]
        servers.append(
            _Server(
                f"docshelf serve ({model})",
                sys.executable,
                cmd,
                menv,
                "search",
                {"query": QUERY, "k": 5},
                "docshelf.server.app",
            )
        )
    if bench_python:
        data = work / "chroma"
        script = str(HERE / "chroma_mcp_server.py")
        subprocess.run(
            [bench_python, script, "--path", str(data), "--build", str(corpus)],
            env=env,
            check=True,
            capture_output=True,
        )
        servers.append(
            _Server(
                "Chroma + MiniLM stand-in",
                bench_python,
                [bench_python, script, "--path", str(data)],
                env,
                "search_documents",
                {"query": QUERY},
                "chromadb",
            )
        )
    rows: list[dict[str, object]] = []
    for s in servers:
        runs = [anyio.run(_once, s.cmd, s.env, s.tool, s.args) for _ in range(repeats)]
        rows.append(
            {
                "server": s.label,
                "tools_list_ms": statistics.median(r[0] for r in runs),
                "first_search_ms": statistics.median(r[1] for r in runs),
                "import": s.module,
                "import_ms": statistics.median(_import_ms(s.python, s.module, s.env) for _ in range(repeats)),
            }
        )
    return rows
