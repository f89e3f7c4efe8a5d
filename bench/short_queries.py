"""Keyword nDCG@10 with the questions cut to their N longest words (the few-keyword case).

    python bench/short_queries.py /tmp/h30-bible/bible-{en,de,fr,es,it,tl} --split dev --words 3 2

A question of a few words gives the language vote little to go on: this shows what that costs
per language. Runs `docshelf eval --mode keyword` as a subprocess (the CLI a user runs) with the
hash embedder (keyword mode does not use it); each set is indexed once, in --work.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_WORD = re.compile(r"\w[\w'’]*")


def cut(text: str, n: int) -> str:
    """The ``n`` longest distinct words, in the order they come."""
    words = _WORD.findall(text)
    keep = set(sorted(set(words), key=lambda w: (-len(w), w))[:n])
    out: list[str] = []
    for w in words:
        if w in keep and w not in out:
            out.append(w)
    return " ".join(out)


def keyword_ndcg(folder: Path, split: str, work: Path, queries: Path | None) -> float:
    cmd = [sys.executable, "-m", "docshelf", "eval", str(folder), "--split", split, "--mode", "keyword"]
    cmd += ["--workdir", str(work), "--json"] + (["--queries", str(queries)] if queries else [])
    env = {**os.environ, "DOCSHELF_EMBED__MODEL": "hash"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return float(json.loads(done.stdout)["results"][0]["ndcg10"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("sets", nargs="+", type=Path)
    p.add_argument("--split", default="dev")
    p.add_argument("--words", nargs="+", type=int, default=[3, 2])
    p.add_argument("--work", type=Path, default=None)
    args = p.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="short-q-"))
    print(f"$ python {' '.join(sys.argv)}")
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"{'set':<14} {'whole':>7} " + " ".join(f"{f'{n} words':>8}" for n in args.words))
    for folder in args.sets:
        row = [keyword_ndcg(folder, args.split, work / folder.name, None)]
        for n in args.words:
            short = work / f"{folder.name}-q{n}.jsonl"
            lines = (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()
            cut_lines = []
            for line in lines:
                q = json.loads(line)
                cut_lines.append(json.dumps({**q, "text": cut(q["text"], n)}, ensure_ascii=False) + "\n")
            short.write_text("".join(cut_lines), encoding="utf-8")
            row.append(keyword_ndcg(folder, args.split, work / folder.name, short))
        print(f"{folder.name:<14} " + " ".join(f"{v:8.4f}" for v in row), flush=True)


if __name__ == "__main__":
    main()
