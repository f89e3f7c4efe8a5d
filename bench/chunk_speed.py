"""Chunking time for one file at growing prefix sizes, with e5's token count, as the indexer's
parse workers chunk: a cost that grows faster than the size shows as seconds per MB growing.

    python bench/chunk_speed.py FILE [--kb 200,400,800,0] [--baseline-src DIR]

FILE is parsed by its name (``all.json.gz`` is read through); each prefix of N KB (0: the whole
file) is parsed and chunked once. With --baseline-src (the ``src`` folder of another checkout)
the same sizes run there too, alternated with this checkout size by size, each in its own
process. Prints the command, the machine and the load.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from machine import cpu, load  # noqa: E402


def measure(path: Path, kb: int) -> dict[str, float]:
    """Parse and chunk the first ``kb`` KB of ``path`` (0: all) in this process."""
    from docshelf.chunk import chunk_document
    from docshelf.config import Settings
    from docshelf.embed import create_embedder
    from docshelf.parse import default_registry

    settings = Settings()
    embedder = create_embedder(settings.embed, settings.embed.cache_dir.expanduser() / "models")
    embedder.count_tokens("warm up")  # the tokenizer's tables load outside the timing
    data = path.read_bytes()
    name = path.name
    if name.endswith(".gz"):
        data, name = gzip.decompress(data), name[:-3]
    data = data[: kb * 1024] if kb else data
    doc = default_registry().parse(data, name)

    class Count:
        chars = 0

        def count(self, text: str) -> int:
            Count.chars += len(text)
            return embedder.count_tokens(text)

    started = time.perf_counter()
    spans = chunk_document(doc, Count(), settings.chunk.max_tokens, settings.chunk.overlap_tokens)
    took = time.perf_counter() - started
    counted = Count.chars / max(1, len(doc.text))
    return {"kb": len(data) / 1024, "s": took, "chunks": len(spans), "counted": counted}


def run(src: Path, path: Path, kb: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, __file__, str(path), "--one", str(kb)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    result: dict[str, float] = json.loads(out.splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--kb", default="200,400,800,0", help="prefix sizes in KB, 0 for the whole file")
    ap.add_argument("--baseline-src", type=Path, help="another checkout's src folder")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process: one size, JSON out
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.file, args.one)))
        return
    print(f"$ python bench/chunk_speed.py {' '.join(sys.argv[1:])}")
    print(f"machine: {platform.node()}, {cpu()}, Python {platform.python_version()}; {load()}")
    this = HERE.parent / "src"
    for kb in (int(k) for k in args.kb.split(",")):
        for label, src in [("this", this), *([("baseline", args.baseline_src)] if args.baseline_src else [])]:
            r = run(src, args.file, kb)
            rate = r["s"] / max(r["kb"] / 1024, 1e-9)
            print(
                f"{label:8} {r['kb']:9.0f} KB  {r['s']:8.2f} s  {rate:7.2f} s/MB  {r['chunks']:6.0f} chunks  "
                f"{r['counted']:6.1f} characters counted per character"
            )
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
