"""PostgreSQL streaming replication with docshelf: replay lag after each commit, replica search latency.

    python bench/replication_bench.py [--files 2000] [--edits 50] [--queries 300]

A primary and two hot-standby replicas from the bundled binaries (pg_basebackup -R, loopback; the
same setup as tests/test_replication.py, durable: fsync on). The primary indexes --files small
Markdown files (hash embedder: the figures are the database's, not a model's), then --edits one-file
edits, each synced on the primary and timed until both replicas have replayed the commit (lag =
from the sync's return to the replica's replay position passing the primary's WAL insert position).
Then --queries keyword and hybrid searches on each replica and on the primary. Load averages are
printed with every figure.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from docshelf.config import load_settings
from docshelf.embed import HashEmbedder
from docshelf.search.evaluate import percentile
from docshelf.testing import Stages
from docshelf.testing.replication import Cluster, wait_replayed

WORDS = ["deploy", "rollback", "incident", "pager", "rotation", "vault", "backup", "restore", "budget"]


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def settings_for(tmp: Path, url: str, name: str):  # type: ignore[no-untyped-def]
    s = load_settings(collection="bench")
    s.store.data_dir, s.store.url, s.embed.model = tmp / name, url, "hash"
    return s


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=2000)
    p.add_argument("--edits", type=int, default=50)
    p.add_argument("--queries", type=int, default=300)
    args = p.parse_args()
    print(
        f"$ python bench/replication_bench.py --files {args.files} --edits {args.edits} "
        f"--queries {args.queries}"
    )
    tmp = Path(tempfile.mkdtemp(prefix="docshelf-replbench-"))
    rng = random.Random(3)
    corpus = tmp / "corpus"
    for i in range(args.files):
        folder = corpus / f"d{i // 500:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{i:05d}.md").write_text(f"# Note {i}\n\n{' '.join(rng.choices(WORDS, k=60))}\n", "utf-8")
    try:
        with Cluster(tmp / "pg", replicas=2, durable=True) as cluster:
            started = time.perf_counter()
            with Stages(settings_for(tmp, cluster.primary, "primary"), embedder=HashEmbedder()) as primary:
                primary.indexer().sync("bench", [corpus])
                print(
                    f"primary: {args.files} files indexed in {time.perf_counter() - started:.1f} s ({load()})"
                )
                first = [wait_replayed(cluster.primary, r, 120) for r in cluster.replicas]
                print(
                    "replicas caught up with the first index after " + ", ".join(f"{x:.2f} s" for x in first)
                )
                lags: list[float] = []
                for e in range(args.edits):
                    target = corpus / "d00" / f"n{e:05d}.md"
                    target.write_text(target.read_text("utf-8") + f"\nedit{e}\n", "utf-8")
                    primary.indexer().sync("bench", [corpus])
                    t0 = time.perf_counter()
                    for replica in cluster.replicas:
                        wait_replayed(cluster.primary, replica, 60)
                        lags.append(time.perf_counter() - t0)
                p50, p95 = percentile(lags, 0.5) * 1000, percentile(lags, 0.95) * 1000
                print(f"replay lag after a one-file sync on the primary ({2 * args.edits} replica waits): "
                      f"p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {max(lags) * 1000:.0f} ms "
                      f"({load()})")  # fmt: skip
                rows = [("primary", primary)]
                replicas = [Stages(settings_for(tmp, url, f"r{i}"), embedder=HashEmbedder())
                            for i, url in enumerate(cluster.replicas)]  # fmt: skip
                rows += [(f"replica {i + 1}", rt) for i, rt in enumerate(replicas)]
                queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(args.queries)]
                try:
                    for name, rt in rows:
                        searcher = rt.searcher()
                        for mode in ("keyword", "hybrid"):
                            lat = []
                            for q in queries:
                                t = time.perf_counter()
                                searcher.search(q, k=10, mode=mode)  # type: ignore[arg-type]
                                lat.append((time.perf_counter() - t) * 1000)
                            print(f"{name:<9} {mode:<7} search: p50 {percentile(lat, 0.5):.1f} ms, "
                                  f"p95 {percentile(lat, 0.95):.1f} ms ({load()})")  # fmt: skip
                finally:
                    for rt in replicas:
                        rt.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
