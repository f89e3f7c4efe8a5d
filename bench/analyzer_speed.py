"""CPU time of keyword analysis per scifact document (process time, so other jobs' load matters less).

    python bench/analyzer_speed.py [--label new] [--docs 3000]
    PYTHONPATH=/path/to/other/checkout/src python bench/analyzer_speed.py --label base

Run it against two checkouts back to back to compare analyzers; the indexing-throughput cost of a
change is its difference here against the ~26 ms of CPU e5 spends embedding one chunk (38 chunks/s).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from docshelf.analyze import Analyzer

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--label", default="this checkout")
    p.add_argument("--docs", type=int, default=3000)
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    args = p.parse_args()
    with (args.eval_data / "scifact" / "corpus.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for _, line in zip(range(args.docs), fh, strict=False)]
    texts = [f"{r['title']}\n{r['text']}" for r in rows]
    analyzer = Analyzer()
    analyzer.terms("warm up")
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        for text in texts:
            analyzer.terms(text)
        best = min(best, time.process_time() - t0)
    chars = sum(map(len, texts)) / len(texts)
    print(f"{args.label}: {best / len(texts) * 1000:.3f} ms CPU per document ({chars:.0f} characters), "
          f"best of 3; load average {os.getloadavg()[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
