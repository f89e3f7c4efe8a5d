"""How often real questions get the "nearest neighbours" note (false positives), and nonsense does not.

    python bench/note_rate.py [--model e5] [--set xquad-en:/tmp/eval/e5-xquad-en ...] [--max-queries 300]

Through `docshelf.Shelf` (the path both front doors take), hybrid mode, default k. The sample
corpus is indexed in a scratch folder and asked hand-written questions about its documents and
made-up words; each ``--set NAME:WORKDIR`` reuses an index kept by `docshelf eval --workdir` and
asks the set's own queries (all real questions: every note is a false positive). A pair such as
``xquad-en>xquad-zh:WORKDIR`` asks xquad-en's questions of the Chinese index (cross-lingual).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

from docshelf.config import load_settings
from docshelf.search.confidence import NEAREST_NOTE
from docshelf.search.evaluate import load_beir
from docshelf.shelf import Shelf

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "corpus"
REAL = [
    "How do I roll back a failed deployment?",
    "Who do I page for a SEV-1 incident?",
    "What is a SEV-2?",
    "Wie viele Urlaubstage habe ich?",
    "Wann verfällt der Resturlaub?",
    "数据多久备份一次？",
    "How often are the databases backed up?",
    "What should I do on my first day?",
    "How long do I keep vacation days after being sick?",
    "deploy guide",
    "incident channel",
    "style guide headings",
]
NONSENSE = ["zzqxjv wombat", "flurbish quantaloo", "blorptastic umbrella wibble", "xkcd qwfp zxcv", "gnarfle"]


def rate(shelf: Shelf, queries: list[str]) -> tuple[int, int]:
    noted = sum(1 for q in queries if (shelf.search(q).note or "").find(NEAREST_NOTE) >= 0)
    return noted, len(queries)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="e5")
    p.add_argument("--set", action="append", default=[], help="NAME:WORKDIR or QUERIES>INDEX:WORKDIR")
    p.add_argument("--max-queries", type=int, default=300)
    args = p.parse_args()
    print(f"$ python {' '.join(sys.argv)}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, load {os.getloadavg()}")
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="h15-note-") as tmp:
        settings = load_settings()
        settings.embed.model = args.model
        settings.store.data_dir = Path(tmp) / "data"
        shutil.copytree(SAMPLES, Path(tmp) / "corpus")
        with Shelf(settings) as shelf:
            shelf.index([Path(tmp) / "corpus"])
            rows.append(("sample corpus, real questions", *rate(shelf, REAL)))
            rows.append(("sample corpus, nonsense (should all get it)", *rate(shelf, NONSENSE)))
    for spec in args.set:
        name, workdir = spec.split(":", 1)
        asked = name.split(">")[0]
        data = load_beir(Path(os.environ.get("EVAL_DATA", "/work/shared/eval-data")) / asked, "test")
        settings = load_settings()
        settings.embed.model = args.model
        settings.store.data_dir = Path(workdir) / "index"
        queries = [data.queries[q] for q in list(data.queries)[: args.max_queries]]
        with Shelf(settings) as shelf:
            rows.append((f"{name} test queries", *rate(shelf, queries)))
            rows.append((f"{name.split('>')[-1]} index, made-up words", *rate(shelf, NONSENSE)))
    print("\n| queries | noted | asked | rate |\n|---|---|---|---|")
    for label, noted, asked_n in rows:
        print(f"| {label} | {noted} | {asked_n} | {noted / max(1, asked_n):.1%} |")
    print(f"\n{time.perf_counter() - started:.0f} s, load {os.getloadavg()}")


if __name__ == "__main__":
    main()
