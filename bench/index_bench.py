"""Index throughput and no-op re-sync time on scifact written out as files.

    python bench/index_bench.py [--model e5] [--limit N] [--workers 1,2] [--eval-data ../shared/eval-data]

Prints files/s and chunks/s for a full index with each number of embedding workers (one core
each: ``embed.workers``, ``embed.threads = 1``) and the speedup over the first, with the load
average before and after each run (target: >= 1.7x on 2 cores, on a quiet machine), then the time
of a no-op re-sync (target: <= 2 s for 10k files on 2 cores). The no-op figure is also measured on
10,000 small files so the target is checked at its stated size.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from docshelf.config import load_settings
from docshelf.search.evaluate import load_beir, write_corpus
from docshelf.testing import Stages

ROOT = Path(__file__).resolve().parents[1]


def timed_sync(rt: Stages, folder: Path) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    report = rt.indexer().sync("bench", [folder])
    return time.perf_counter() - t0, len(report.added) + len(report.updated), report.chunks_written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="e5")
    parser.add_argument("--limit", type=int, default=0, help="index only the first N documents")
    parser.add_argument("--workers", default="1,2", help="embedding workers per run, comma-separated")
    parser.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    args = parser.parse_args()

    data = load_beir(args.eval_data / "scifact")
    if args.limit:
        data.corpus = dict(list(data.corpus.items())[: args.limit])
    work = Path(tempfile.mkdtemp(prefix="docshelf-bench-"))
    try:
        write_corpus(data, work / "corpus")
        rates: list[float] = []
        for workers in [int(w) for w in args.workers.split(",")]:
            settings = load_settings()
            settings.store.data_dir = work / f"index-{workers}"
            settings.embed.model = args.model
            settings.embed.threads, settings.embed.workers = 1, workers
            rt = Stages(settings)
            rt.embedder.embed_documents(["warm-up", "the workers start"])  # model load is not indexing
            before = os.getloadavg()[0]
            seconds, files, chunks = timed_sync(rt, work / "corpus")
            rates.append(chunks / seconds)
            print(f"model {rt.embedder.name}, {workers} worker(s) x 1 thread: {files} files, "
                  f"{chunks} chunks in {seconds:.1f}s = {files / seconds:.1f} files/s, "
                  f"{chunks / seconds:.1f} chunks/s, "
                  f"{rates[-1] / rates[0]:.2f}x the first (load {before:.2f} -> {os.getloadavg()[0]:.2f})",
                  flush=True)  # fmt: skip
            noop, changed, _ = timed_sync(rt, work / "corpus")
            print(f"no-op re-sync of {files} files: {noop:.2f}s ({changed} re-indexed)")
            rt.close()

        # 10k small files with the hash embedder: the no-op target at its stated size
        many = work / "many"
        for i in range(10_000):
            sub = many / f"d{i // 500:02d}"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / f"note{i}.md").write_text(f"# Note {i}\n\nSmall file number {i}.\n", encoding="utf-8")
        settings.store.data_dir = work / "index-many"
        settings.embed.model = "hash"
        rt = Stages(settings)
        first, files, _ = timed_sync(rt, many)
        noop, changed, _ = timed_sync(rt, many)
        print(f"10,000 files (hash embedder): first sync {first:.1f}s, no-op re-sync {noop:.2f}s "
              f"({changed} re-indexed; target <= 2 s)")  # fmt: skip
        rt.close()
        print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
