"""Keyword first, vectors after, on a large corpus, through the real CLI: how soon every file is
keyword-searchable, how long until every chunk has its vector, and today's full index beside it.

    python bench/keyword_first_bench.py [--files 20000] [--work DIR] [--baseline-src DIR] [--keep]

The corpus is bench/gen_corpus.py's (20,000 files: some 150,000 chunks; --corpus for your own).
`docshelf index CORPUS --json` runs once with e5 (embed.workers = 2: both cores); from its report and
its wall time:

- keyword-searchable: the process's wall time minus its embedding phase (the first phase ends when
  the last new file is swapped in and published), checked afterwards by keyword searches for the
  marker of every 50th file through the CLI;
- full hybrid: the process's wall time;
- the ratio keyword / full (target <= 0.2).

With --baseline-src (the ``src`` folder of a checkout from before keyword-first, e.g.
``git worktree add /tmp/old 3888ab9`` then ``/tmp/old/src``), that docshelf indexes the same corpus
into another folder before each run (its full index: the "today" figure), and the ratio full /
today is printed, of wall and of CPU time (target <= 1.0). --rounds alternates the two that many
times (medians). Every figure comes with the machine and the load before and after.
A full run at the default size takes about an hour per index on two quiet cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine import cpu, load

HERE = Path(__file__).resolve().parent


def index(corpus: Path, data: Path, env: dict[str, str]) -> tuple[dict[str, Any], float, float]:
    """`docshelf index CORPUS --json` into a fresh ``data``: its report, wall and CPU seconds."""
    shutil.rmtree(data, ignore_errors=True)
    cmd = [sys.executable, "-m", "docshelf", "index", str(corpus), "--json", "--data-dir", str(data)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        sys.exit(f"index failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(proc.stdout), wall, cpu_s


def found(marker: str, data: Path, env: dict[str, str]) -> bool:
    cmd = [sys.executable, "-m", "docshelf", "search", marker, "--mode", "keyword", "--json", "-k", "1",
           "--no-helper", "--data-dir", str(data)]  # fmt: skip
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    hits = json.loads(proc.stdout)["hits"] if proc.returncode == 0 else []
    return bool(hits) and marker[2:] in hits[0]["path"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--baseline-src", type=Path, help="src folder of an older docshelf checkout")
    parser.add_argument("--rounds", type=int, default=1, help="alternated runs of each (medians)")
    parser.add_argument("--keep", action="store_true", help="keep the indexes")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="docshelf-kwfirst-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(DOCSHELF_EMBED__MODEL="e5", DOCSHELF_EMBED__WORKERS="2", XDG_DATA_HOME=str(work / "xdg"))
    corpus = args.corpus or work / "corpus"
    if args.corpus is None and not corpus.exists():
        sys.path.insert(0, str(HERE))
        from gen_corpus import generate

        generate(corpus, args.files)
    files = sum(1 for _ in corpus.rglob("*.md"))
    print(
        f"machine: {cpu()}, {os.cpu_count()} cores, Python {platform.python_version()}; corpus {files} files"
    )
    todays: list[tuple[float, float]] = []
    news: list[tuple[float, float, float]] = []
    for r in range(1, args.rounds + 1):  # alternated: a change in the machine's load hits both
        if args.baseline_src:
            old = {**env, "PYTHONPATH": str(args.baseline_src)}
            before = load()
            report, wall, cpu_s = index(corpus, work / "today", old)
            todays.append((wall, cpu_s))
            print(f"round {r}, today's index ({args.baseline_src}): {report['added']} files, "
                  f"{report['chunks_written']} chunks, {wall:.1f}s, CPU {cpu_s:.0f}s "
                  f"({before} -> {load()})")  # fmt: skip
        before = load()
        report, wall, cpu_s = index(corpus, work / "new", env)
        keyword = wall - (report["seconds"] - report["keyword_seconds"])
        news.append((keyword, wall, cpu_s))
        print(f"round {r}, keyword first: {report['added']} files, {report['chunks_written']} chunks; every "
              f"file keyword-searchable after {keyword:.1f}s, every chunk with its vector after {wall:.1f}s, "
              f"CPU {cpu_s:.0f}s ({report['chunks_embedded']} texts embedded in "
              f"{report['embed_seconds']:.1f}s; {before} -> {load()})")  # fmt: skip
    keyword, wall, cpu_s = (statistics.median(x) for x in zip(*news, strict=True))
    print(f"keyword-searchable / full hybrid: {keyword / wall:.3f} (target <= 0.2)")
    if todays:
        today, today_cpu = (statistics.median(x) for x in zip(*todays, strict=True))
        print(f"full hybrid / today's full index: wall {wall / today:.3f}, CPU {cpu_s / today_cpu:.3f} "
              "(target <= 1.0; medians)")  # fmt: skip
    sys.path.insert(0, str(HERE))
    from gen_corpus import marker

    generated = (corpus / "part0000" / "doc000000.md").is_file()  # gen_corpus's: a marker a file
    sample = range(0, files, 50) if generated else []
    missing = [n for n in sample if not found(marker(n), work / "new", env)]
    if sample:
        print(f"keyword check: {len(sample) - len(missing)} of {len(sample)} sampled files found by marker")
    if not args.keep:
        for name in ("today", "new"):
            shutil.rmtree(work / name, ignore_errors=True)


if __name__ == "__main__":
    main()
