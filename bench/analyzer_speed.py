"""CPU time of keyword analysis per scifact document (process time, so other jobs' load matters less).

Documents are analysed as indexing does (``chunk_terms``: a passage, whose accented words also
get their unaccented spelling's stems).

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
    p.add_argument("--set", default="scifact", help="corpus to analyse (xquad-de: German compounds)")
    p.add_argument("--no-decompound", action="store_true")
    args = p.parse_args()
    with (args.eval_data / args.set / "corpus.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for _, line in zip(range(args.docs), fh, strict=False)]
    texts = [f"{r['title']}\n{r['text']}" for r in rows]
    # a checkout from before decompounding (PYTHONPATH to it) has no such argument
    analyzer = Analyzer(decompound=False) if args.no_decompound else Analyzer()
    analyzer.chunk_terms(None, (), "warm up")
    analyzer.chunk_terms(None, (), "Aufwärmen der Wortliste")  # the German word list loads once, not timed
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        for text in texts:
            analyzer.chunk_terms(None, (), text)
        best = min(best, time.process_time() - t0)
    chars = sum(map(len, texts)) / len(texts)
    per_doc = best / len(texts) * 1000
    print(f"{args.label} ({args.set}): {per_doc:.3f} ms CPU per document ({chars:.0f} chars), "
          f"best of 3; load average {os.getloadavg()[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
