"""How many chunks are fragments: chunks far below the budget in documents that fill several.

    python bench/chunk_sizes.py FOLDER [FOLDER ...] [--work /tmp/docshelf-chunks] [--show 5]

Each folder is indexed with `docshelf index --keyword-only` as a process (the real parsers and
the bundled model's token count; no vectors), then the stored chunks are counted. A fragment is a
chunk under 1/8 of chunk.max_tokens that is not its document's last (the last one holds what is
left of the document; any other is a cut the packer could have avoided: a title alone before a
long paragraph, a list label split off as a "sentence"). Fragments rank high in BM25 (length
normalisation rewards a short chunk that holds one query word) and say nothing as a hit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from machine import cpu, load  # noqa: E402

MAX_TOKENS = 256  # chunk.max_tokens's default


def index(folder: Path, data_dir: Path) -> float:
    shutil.rmtree(data_dir, ignore_errors=True)
    env = {**os.environ, "DOCSHELF_DATA_DIR": str(data_dir)}
    started = time.monotonic()
    subprocess.run(
        ["docshelf", "index", "--keyword-only", str(folder)],
        env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return time.monotonic() - started


def measure(data_dir: Path, show: int) -> dict[str, float]:
    db = sqlite3.connect(data_dir / "docshelf.db")
    rows = db.execute(
        "SELECT d.path, c.ordinal, c.token_count, c.text,"
        " COUNT(*) OVER (PARTITION BY c.doc_id) AS n,"
        " MAX(c.ordinal) OVER (PARTITION BY c.doc_id) AS last"
        " FROM chunks c JOIN documents d ON d.id = c.doc_id"
    ).fetchall()
    small = MAX_TOKENS // 8
    multi = [r for r in rows if r[4] > 1]
    fragments = [r for r in multi if r[2] < small and r[1] != r[5]]
    for path, ordinal, tokens, text, _n, _last in fragments[:show]:
        print(f"    {path} #{ordinal} ({tokens} tokens): {text[:70]!r}")
    docs = {r[0] for r in fragments}
    return {
        "chunks": len(rows),
        "in_multi_chunk_docs": len(multi),
        "fragments": len(fragments),
        "share": len(fragments) / max(1, len(multi)),
        "docs_with_fragments": len(docs),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--work", type=Path, default=Path("/tmp/docshelf-chunks"))
    ap.add_argument("--show", type=int, default=5, help="fragments to print per folder")
    args = ap.parse_args()
    print("$ python bench/chunk_sizes.py " + " ".join(sys.argv[1:]))
    print(f"machine: {cpu()}, {os.cpu_count()} cores; {load()}")
    for i, folder in enumerate(args.folders):
        data_dir = args.work / f"index-{i}"
        seconds = index(folder.resolve(), data_dir)
        print(f"{folder} (indexed keyword-only in {seconds:.1f} s):")
        m = measure(data_dir, args.show)
        print(
            f"  {m['chunks']:,} chunks, {m['in_multi_chunk_docs']:,} in documents of several; "
            f"fragments (< {MAX_TOKENS // 8} tokens, not a document's last): {m['fragments']:,} "
            f"= {m['share']:.2%}, in {m['docs_with_fragments']:,} documents"
        )


if __name__ == "__main__":
    main()
