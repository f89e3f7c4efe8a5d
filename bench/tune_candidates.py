"""Hybrid nDCG@10 by the size of the candidate lists (``search.candidates``) on kept indexes.

    python bench/tune_candidates.py --pools 100,200,300 "scifact:train" "nfcorpus:dev" xquad-de:test
    python bench/tune_candidates.py --pools 200,300 /tmp/bible-sets/bible-fr:dev --bible-work /tmp/acc/w

Each query asks for as many chunks as the pool holds, so the ranking is what a search with that
setting returns (`docshelf eval` asks for ``search.candidates``). The z-score fusion standardises
each list over its candidates, so their number changes the hybrid ranking. Indexes are the ones
bench/eval_all.py keeps (WORK/e5-NAME/index), or for a BEIR folder of our own BIBLE_WORK/NAME/index.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from kept_index import kept_set

from docshelf.search.evaluate import evaluate
from docshelf.testing import Stages


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("sets", nargs="+", help="NAME:SPLIT (a shared set) or FOLDER:SPLIT (a set of our own)")
    p.add_argument("--pools", default="100,200,300")
    p.add_argument(
        "--eval-data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval-data"
    )
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    p.add_argument("--bible-work", type=Path, default=Path("/tmp/acc/w"))
    args = p.parse_args()
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    print(f"$ python {' '.join(sys.argv)}\n{machine}, load average {os.getloadavg()[0]:.2f}", flush=True)
    pools = [int(x) for x in args.pools.split(",")]
    for item in args.sets:
        name, _, split = item.rpartition(":")
        folder = Path(name)
        if "/" in name:  # a set of our own, its index where `docshelf eval --workdir` kept it
            index = args.bible_work / folder.name / "index"
            data, by_name, settings = kept_set(folder.name, split, folder.parent, args.work, index=index)
        else:
            data, by_name, settings = kept_set(name, split, args.eval_data, args.work)
        started, cells = time.time(), []
        with Stages(settings) as rt:
            for pool in pools:
                rt.settings.search.candidates = pool  # evaluate() asks for this many chunks a query
                (scores,) = evaluate(rt.searcher(), data, by_name, "eval", ("hybrid",))
                cells.append(f"{pool}: {scores.ndcg10:.4f}")
        took = f"({time.time() - started:.0f} s)"
        print(f"{folder.name}:{split}  " + "  ".join(cells) + f"  {took}", flush=True)


if __name__ == "__main__":
    main()
