"""Dense pseudo-relevance feedback (Rocchio on the query vector), measured on train/dev qrels.

    python bench/tune_dense_prf.py --work /tmp/docshelf-eval --sets "scifact train" "nfcorpus dev"
    python bench/tune_dense_prf.py --sets none --extra /tmp/bible-sets/bible-en:dev --extra-work W

The query vector becomes normalise(q + beta * mean of the top-K chunks' stored vectors), taken
from the fused list (`fused`) or the dense list (`dense`); the dense side is searched again
(exactly, over the store's float32 vectors, embedded store only) and fused as the searcher does.
A variant SRC:K:BETA[:N] applies only to statements (not questions) of at most N analysed terms
with at least half of them in the index,
the rule `search.dense_feedback` ships with (3:1:6, search/feedback.py); "current" is the
fusion without feedback.
Indexes as bench/eval_all.py keeps them; nothing is embedded but the queries.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from pathlib import Path

import numpy as np

from docshelf.search.evaluate import doc_ranking, ndcg_at
from docshelf.search.feedback import applies
from docshelf.search.fusion import fuse_hybrid, long_query_share
from docshelf.store.base import SearchFilter
from docshelf.testing import Stages

sys.path.insert(0, str(Path(__file__).parent))
from kept_index import kept_set

ROOT = Path(__file__).resolve().parents[1]
Ranked = list[tuple[str, float]]
# (label, index set, qrels split, questions from): tuning splits only
SETS = [
    ("scifact train", "scifact", "train", None),
    ("nfcorpus dev", "nfcorpus", "dev", None),
    ("de → en", "xquad-en", "test", "xquad-de"),
]


def docs_of(ranked: Ranked, chunk_doc: dict[str, str]) -> list[str]:
    return doc_ranking((cid for cid, _ in ranked), chunk_doc.get)[:10]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    p.add_argument("--sets", nargs="+", required=True)
    p.add_argument("--variants", nargs="+", default=["fused:3:0.5", "fused:3:1", "fused:5:1", "fused:3:1:6"])
    p.add_argument("--extra", nargs="*", default=[], help="own sets, FOLDER:split (make_bible_sets.py)")
    p.add_argument("--extra-work", type=Path, default=None, help="their kept indexes (e5-NAME/index)")
    args = p.parse_args()
    print(f"$ python {' '.join(sys.argv)}\nload average {os.getloadavg()[0]:.2f}")
    print(f"{'set':<14} {'current':>8} " + " ".join(f"{v:>11}" for v in args.variants))
    todo = [(lb, n, sp, src, args.eval_data, args.work) for lb, n, sp, src in SETS if lb in args.sets]
    for spec in args.extra:
        folder, _, split = spec.rpartition(":")
        todo.append((f"{Path(folder).name} {split}", Path(folder).name, split, None, Path(folder).parent,
                     args.extra_work or args.work))  # fmt: skip
    for label, name, split, source, eval_data, work in todo:
        data, names, settings = kept_set(name, split, eval_data, work, source or None)
        with sqlite3.connect(settings.store.data_dir / "docshelf.db") as db:
            rows = db.execute(
                "SELECT c.id, v.vector FROM chunks c JOIN vectors v ON v.key = c.embed_key"
            ).fetchall()
        ids = [r[0] for r in rows]
        matrix = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
        at = {cid: i for i, cid in enumerate(ids)}
        rt = Stages(settings)
        pool = settings.search.candidates  # as a search and `docshelf eval` fuse
        try:
            searcher = rt.searcher()
            chunk_doc = {}
            for doc in rt.store.iter_documents():
                for c in rt.store.document_chunks(doc.id):
                    chunk_doc[c.id] = names.get(Path(doc.path).name, "")
            totals = [0.0] * (1 + len(args.variants))
            for qid, text in data.queries.items():
                terms = [t.term for t in searcher.analyzer.tokens(text)]
                vec = rt.embedder.embed_query(text)
                lists, coverage = rt.store.candidates(terms, vec, pool, SearchFilter(), True, True)
                other = searcher.other_language(text, lists)
                base = long_query_share(rt.embedder.fusion_weight, len(terms))
                fused = fuse_hybrid(settings.search, lists, coverage, other, base)
                totals[0] += ndcg_at(docs_of(fused, chunk_doc), data.qrels[qid])
                for n, variant in enumerate(args.variants, start=1):
                    src, k, beta, *most = variant.split(":")
                    if most and not applies(text, len(terms), coverage, int(most[0])):
                        totals[n] += ndcg_at(docs_of(fused, chunk_doc), data.qrels[qid])
                        continue
                    top = (fused if src == "fused" else lists["semantic"])[: int(k)]
                    feedback = matrix[[at[c] for c, _ in top if c in at]].mean(axis=0)
                    q2 = vec + float(beta) * feedback
                    q2 = q2 / np.linalg.norm(q2)
                    scores = matrix @ q2
                    best = np.argsort(-scores)[:pool]
                    sem = [(ids[i], float(scores[i])) for i in best]
                    again_lists = {"keyword": lists.get("keyword", []), "semantic": sem}
                    again = fuse_hybrid(settings.search, again_lists, coverage, other, base)
                    totals[n] += ndcg_at(docs_of(again, chunk_doc), data.qrels[qid])
        finally:
            rt.close()
        means = [t / len(data.queries) for t in totals]
        print(f"{label:<14} {means[0]:8.4f} " + " ".join(f"{m:11.4f}" for m in means[1:]), flush=True)


if __name__ == "__main__":
    main()
