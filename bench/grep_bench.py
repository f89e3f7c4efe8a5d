"""grep at scale, through MCP: literal phrases (trigram candidates, verified on the text) and a regex
with no literal part (every document read, within the time limit) on a 100k-chunk index.

    python bench/grep_bench.py [--chunks 100000] [--work /tmp/docshelf-grep] [--literals 100]

The index: the scifact corpus (/work/shared/eval-data or --eval-data) indexed with the hash
embedder, then grown with copies whose sentences are rotated (bench/synthetic.py) until it holds
--chunks chunks; reused when --work already has it. A real `docshelf serve --read-only` answers an
MCP SDK client over stdio; each figure is the client's wall time per tools/call. Literals are
two-word phrases and single words taken from the documents at random (seeded), so most match;
after 5 warm-up calls. Targets: literal p50 <= 100 ms, literal-free regex <= 3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
REGEXES = [r"\b[0-9]{2}\.[0-9]{3}\b", r"[A-Z]{5,}[0-9]", r"(?i)\b\w+ase\b \w+ly"]


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def settings_for(data_dir: Path) -> Any:
    from docshelf.config import load_settings

    s = load_settings()
    s.store.data_dir = data_dir
    s.embed.model = "hash"
    return s


def build(args: argparse.Namespace) -> Path:
    """The grown index in --work/index (built unless it already holds --chunks chunks)."""
    import synthetic

    from docshelf.search.evaluate import load_beir, write_corpus
    from docshelf.shelf import Shelf
    from docshelf.store import open_store

    index = args.work / "index"
    if (index / "docshelf.db").is_file():
        with Shelf(settings_for(index)) as shelf:
            if shelf.summary().chunks >= args.chunks:
                print(f"reusing {index} ({shelf.summary().chunks:,} chunks)")
                return index
        shutil.rmtree(index)
    base = args.work / "base"
    if not (base / "docshelf.db").is_file():
        corpus = args.work / "corpus"
        write_corpus(load_beir(args.eval_data / "scifact", "test"), corpus)
        t = time.perf_counter()
        with Shelf(settings_for(base)) as shelf:
            shelf.index([corpus], "base")
        print(f"base index: {time.perf_counter() - t:.0f} s")
    t = time.perf_counter()
    source = open_store(settings_for(base), _analyzer())
    target = open_store(settings_for(index), _analyzer())
    try:
        model = source.model()
        target.set_model(str(model[0]), int(model[1] or 0))
        target.set_collection_roots("scale", [])  # synthetic.grow writes its copies there
        total = synthetic.grow(source, target, int(model[1] or 0), args.chunks)
        target.commit()
    finally:
        source.close()
        target.close()
    print(f"grown to {total:,} chunks in {time.perf_counter() - t:.0f} s ({load()})")
    return index


def _analyzer() -> Any:
    from docshelf.analyze import Analyzer
    from docshelf.config import load_settings

    return Analyzer.from_settings(load_settings().analyze)


def literals(index: Path, n: int, seed: int = 7) -> list[str]:
    """Two-word phrases and single words of 6+ letters from random chunks of the index."""
    import sqlite3

    rng = random.Random(seed)
    with sqlite3.connect(index / "docshelf.db") as conn:
        top = int(conn.execute("SELECT max(seq) FROM chunks").fetchone()[0])
        out: list[str] = []
        while len(out) < n:
            row = conn.execute(
                "SELECT text FROM chunks WHERE seq >= ? LIMIT 1", (rng.randint(1, top),)
            ).fetchone()
            words = re.findall(r"[A-Za-z]{6,}", row[0] if row else "")
            if len(words) < 3:
                continue
            i = rng.randrange(len(words) - 1)
            out.append(f"{words[i]} {words[i + 1]}" if len(out) % 2 else words[i])
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(index: Path, phrases: list[str]) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(DOCSHELF_EMBED__MODEL="hash")
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "docshelf", "serve", "--read-only", "--data-dir", str(index)],
        env=env,
    )
    out: dict[str, Any] = {"literal_ms": [], "literal_lines": [], "regex": []}
    async with Client(server, read_timeout_seconds=120) as c:
        for p in phrases[:5]:  # warm-up: the index opens, pages come into the cache
            await c.call_tool("grep", {"pattern": p})
        for p in phrases:
            t = time.perf_counter()
            res = await c.call_tool("grep", {"pattern": p, "max_results": 20})
            out["literal_ms"].append((time.perf_counter() - t) * 1000)
            data = res.structured_content or {}
            assert not res.is_error and not data.get("scanned"), (p, res.content)
            out["literal_lines"].append(int(data.get("total_lines", 0)))
        for rx in REGEXES:
            t = time.perf_counter()
            # count: every document read (the cap, 500 documents with matches, is rarely reached)
            res = await c.call_tool(
                "grep", {"pattern": rx, "regex": True, "output": "count", "max_results": 500}
            )
            took = time.perf_counter() - t
            data = res.structured_content or {}
            out["regex"].append(
                {"pattern": rx, "s": round(took, 2), "scanned": data.get("scanned"),
                 "documents_read": data.get("documents_read"), "lines": data.get("total_lines"),
                 "cut": bool(data.get("next_cursor")), "note": data.get("note")}
            )  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--work", type=Path, default=Path("/tmp/docshelf-grep"))
    ap.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    ap.add_argument("--literals", type=int, default=100)
    args = ap.parse_args()
    import anyio

    print("$", " ".join(sys.argv))
    cpu = platform.processor() or platform.machine()
    print(f"machine: {platform.platform()}, {cpu}, {os.cpu_count()} cores, {load()}")
    index = build(args)
    phrases = literals(index, args.literals)
    print(f"measuring {len(phrases)} literals and {len(REGEXES)} regexes ({load()})")
    got = anyio.run(measure, index, phrases)
    ms = got["literal_ms"]
    hits = sum(1 for n in got["literal_lines"] if n)
    print(
        f"literal grep through MCP at {args.chunks:,} chunks: p50 {percentile(ms, 0.5):.1f} ms, "
        f"p95 {percentile(ms, 0.95):.1f} ms, max {max(ms):.1f} ms ({hits}/{len(ms)} matched; {load()})"
    )
    for r in got["regex"]:
        print(f"regex {r['pattern']!r}: {r['s']:.2f} s, scanned={r['scanned']}, documents read "
              f"{r['documents_read']}, lines {r['lines']}, cut={r['cut']}")  # fmt: skip
    print(json.dumps({"p50_ms": percentile(ms, 0.5), "p95_ms": percentile(ms, 0.95), "regex": got["regex"]}))
    print(f"done ({load()})")


if __name__ == "__main__":
    main()
