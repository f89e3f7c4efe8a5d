"""The indexer's embedding phase against e5's raw throughput on this CPU, on the same batches.

    python bench/embed_throughput.py [--files 300] [--corpus DIR] [--rounds 2] [--sample 600]

The corpus (bench/gen_corpus.py, or --corpus) is indexed once with `docshelf index --keyword-only`
(every chunk waits for its vector). Then, alternated --rounds times, each in a fresh process:

- raw: the onnxruntime session alone (``session.run``, nothing else timed) on the texts the indexer
  would embed, in its pages, each page sorted by token length and cut into its batches exactly as
  ``E5Embedder`` does, fed by as many threads as ``embed.workers`` (both cores by default); the
  feeds (ids, word rows, masks) are made beforehand, for an evenly spread sample of --sample texts
  (all of them would not fit in memory);
- indexer: `docshelf index` on a copy of the keyword-only index (nothing changed on disk, so only
  the second phase runs): texts embedded / the phase's seconds, from its --json report.

Prints the machine, the load around every run, each round's chunks/s and the ratio indexer / raw
(target >= 0.9).
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


def raw(data: Path, sample: int) -> dict[str, Any]:
    """In this process: session.run alone on the indexer's batches (a sample of its pages)."""
    from concurrent.futures import ThreadPoolExecutor

    from docshelf.analyze import Analyzer
    from docshelf.config import load_settings
    from docshelf.embed import create_embedder
    from docshelf.embed.e5 import E5Embedder
    from docshelf.store import open_store
    from docshelf.types import contextual_text

    settings = load_settings()
    settings.store.data_dir, settings.store.read_only = data, True
    embedder = create_embedder(settings.embed, settings.embed.cache_dir.expanduser() / "models")
    assert isinstance(embedder, E5Embedder), "the raw figure is e5's (embed.model = e5)"
    embedder.warm()
    store = open_store(settings, Analyzer.from_settings(settings.analyze))
    step = settings.embed.batch_size * 4  # the indexer's page (Indexer.embed_pending)
    pages: list[list[str]] = []
    after = 0
    while page := store.unembedded_chunks(after, step):
        after = page[-1].seq
        unique = {u.embed_key: contextual_text(u.title, u.heading_path, u.text) for u in page}
        pages.append(list(unique.values()))
    store.close()
    total = sum(len(p) for p in pages)
    every = max(1, round(total / max(1, sample)))
    chosen = [p for i, p in enumerate(pages) if i % every == 0] if total > sample else pages
    feeds = [feed for page in chosen for feed in embedder.onnx_feeds(page)]
    started = time.perf_counter()
    cpu0 = time.process_time()
    with ThreadPoolExecutor(embedder.workers) as pool:
        list(pool.map(embedder.run_feed, feeds))
    seconds, cpu_s = time.perf_counter() - started, time.process_time() - cpu0
    return {"texts": sum(len(p) for p in chosen), "seconds": seconds, "cpu_seconds": cpu_s,
            "workers": embedder.workers, "threads": embedder.threads, "int8": embedder.int8}  # fmt: skip


def run(cmd: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """The finished process, its wall seconds and its CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sample", type=int, default=600, help="texts the raw figure runs")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--raw-only", type=Path, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.raw_only:
        print(json.dumps(raw(args.raw_only, args.sample)))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="docshelf-embed-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(DOCSHELF_EMBED__MODEL="e5", XDG_DATA_HOME=str(work / "xdg"))
    corpus = args.corpus
    if corpus is None:
        corpus = work / "corpus"
        if not corpus.exists():
            sys.path.insert(0, str(HERE))
            from gen_corpus import generate

            generate(corpus, args.files)
    docshelf = [sys.executable, "-m", "docshelf"]
    base = work / "base"
    if not (base / "docshelf.db").exists():
        proc, took, _ = run(
            [*docshelf, "index", str(corpus), "--keyword-only", "--json", "--data-dir", str(base)], env
        )
        if proc.returncode:
            sys.exit(f"keyword-only index failed: {proc.stderr[-2000:]}")
        report = json.loads(proc.stdout)
        print(
            f"keyword-only index: {report['added']} files, {report['chunks_written']} chunks in {took:.1f}s"
        )
    print(f"machine: {cpu()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    ratios: list[float] = []
    for r in range(1, args.rounds + 1):
        before = load()
        proc, _, _ = run(
            [sys.executable, __file__, "--raw-only", str(base), "--sample", str(args.sample)], env
        )
        if proc.returncode:
            sys.exit(f"raw run failed: {proc.stderr[-2000:]}")
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        raw_rate = got["texts"] / got["seconds"]
        print(f"round {r} raw: {got['texts']} texts in {got['seconds']:.1f}s = {raw_rate:.2f}/s "
              f"({got['workers']} workers x {got['threads']} thread, int8 {got['int8']}, "
              f"cpu {got['cpu_seconds']:.1f}s) ({before} -> {load()})")  # fmt: skip
        copy = work / f"round{r}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(base, copy)
        before = load()
        proc, took, cpu_s = run([*docshelf, "index", "--json", "--data-dir", str(copy)], env)
        if proc.returncode:
            sys.exit(f"index failed: {proc.stderr[-2000:]}")
        report = json.loads(proc.stdout)
        rate = report["chunks_embedded"] / report["embed_seconds"]  # texts, as the raw figure counts
        ratios.append(rate / raw_rate)
        per_cpu = report["chunks_embedded"] / cpu_s / (got["texts"] / got["cpu_seconds"])
        print(f"round {r} indexer: {report['chunks_embedded']} texts in "
              f"{report['embed_seconds']:.1f}s = {rate:.2f}/s, process {took:.1f}s ({before} -> {load()}); "
              f"ratio {ratios[-1]:.3f}; texts per CPU second, process / raw: {per_cpu:.3f}")  # fmt: skip
        shutil.rmtree(copy, ignore_errors=True)
    print(f"indexer / raw: median {statistics.median(ratios):.3f} over {len(ratios)} rounds (target >= 0.9)")


if __name__ == "__main__":
    main()
