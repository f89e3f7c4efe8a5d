"""Index throughput and no-op re-sync time on scifact written out as files.

    python bench/index_bench.py [--model e5] [--limit N] [--eval-data ../shared/eval-data]

Prints files/s and chunks/s for a full index, then the time of a no-op re-sync
(target: <= 2 s for 10k files on 2 cores). The no-op figure is also measured on
10,000 small files so the target is checked at its stated size.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

from docshelf.config import load_settings
from docshelf.runtime import Runtime
from docshelf.search.evaluate import load_beir, write_corpus

ROOT = Path(__file__).resolve().parents[1]


def timed_sync(rt: Runtime, folder: Path) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    report = rt.indexer().sync("bench", [folder])
    return time.perf_counter() - t0, len(report.added) + len(report.updated), report.chunks_written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="e5")
    parser.add_argument("--limit", type=int, default=0, help="index only the first N documents")
    parser.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    args = parser.parse_args()

    data = load_beir(args.eval_data / "scifact")
    if args.limit:
        data.corpus = dict(list(data.corpus.items())[: args.limit])
    work = Path(tempfile.mkdtemp(prefix="docshelf-bench-"))
    try:
        write_corpus(data, work / "corpus")
        settings = load_settings()
        settings.store.data_dir = work / "index"
        settings.embed.model = args.model
        rt = Runtime(settings)
        seconds, files, chunks = timed_sync(rt, work / "corpus")
        print(f"model {rt.embedder.name}, threads {settings.embed.threads}")
        print(f"full index: {files} files, {chunks} chunks in {seconds:.1f}s = "
              f"{files / seconds:.1f} files/s, {chunks / seconds:.1f} chunks/s")  # fmt: skip
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
        rt = Runtime(settings)
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
