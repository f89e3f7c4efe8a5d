"""BM25 k1 and b, measured: a BM25 of our own over the keyword index's terms, fused as the searcher fuses.

    python bench/tune_bm25.py --cache /tmp/guard.pkl --sets "scifact train" "nfcorpus dev" [--work DIR]

tantivy fixes k1 = 1.2, b = 0.75. Each chunk's terms come from ``Analyzer.chunk_terms`` (what the
keyword index holds); its top 300 per query replace the recorded keyword list of a
bench/tune_guard.py cache, and the recorded dense list, coverage and language flag are fused with
it as shipped. At 1.2 / 0.75 it reproduces the recorded keyword figures to ~0.002 (tantivy stores
lengths in one byte).
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import pickle
import sys
from pathlib import Path

import numpy as np

from docshelf.config import load_settings
from docshelf.runtime import Runtime
from docshelf.search.evaluate import load_beir, ndcg_at

sys.path.insert(0, str(Path(__file__).parent))
from tune_guard import ROOT, SETS, current, docs_of, query_weight

GRID = [(1.2, 0.75), (0.9, 0.4), (0.9, 0.6), (1.2, 0.5), (0.6, 0.75), (1.2, 0.9), (1.8, 0.75)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", type=Path, required=True, help="a bench/tune_guard.py cache")
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    p.add_argument("--sets", nargs="+", required=True)
    args = p.parse_args()
    print(f"$ python {' '.join(sys.argv)}\n{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    cache = pickle.loads(args.cache.read_bytes())
    where = {label: (name, split, src) for label, name, split, src in SETS}
    for label in args.sets:
        name, split, src = where[label]
        entry = cache[label]
        settings = load_settings()
        settings.store.data_dir = args.work / f"e5-{name}" / "index"
        settings.embed.model = "e5"
        rt = Runtime(settings)
        try:
            data = load_beir(
                args.eval_data / name, split, args.eval_data / src / "queries.jsonl" if src else None
            )
            ids: list[str] = []
            counts: list[collections.Counter[str]] = []
            for doc in rt.store.iter_documents():
                for c in rt.store.document_chunks(doc.id):
                    ids.append(c.id)
                    counts.append(
                        collections.Counter(rt.analyzer.chunk_terms(doc.title, c.heading_path, c.text))
                    )
            lens = np.array([sum(c.values()) for c in counts], dtype=np.float64)
            postings: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
            for i, tf in enumerate(counts):
                for term, f in tf.items():
                    postings[term].append((i, f))
            post = {
                t: (np.array([i for i, _ in v]), np.array([f for _, f in v], float))
                for t, v in postings.items()
            }
            searcher = rt.searcher()
            also = searcher.corpus_languages() if rt.analyzer.detect else ()
            qterms = {q: [t.term for t in rt.analyzer.tokens(text, also)] for q, text in data.queries.items()}
            rows, qrels, chunk_doc = entry["rows"], entry["qrels"], entry["chunk_doc"]
            print(f"{label}: {len(ids)} chunks, {len(rows)} queries")
            for k1, b in GRID:
                norm = k1 * (1 - b + b * lens / lens.mean())
                kw_scores, hy_scores = [], []
                for qid, _, sem, coverage, other in rows:
                    score = np.zeros(len(ids))
                    for term in qterms[qid]:
                        if term not in post:
                            continue
                        at, f = post[term]
                        idf = math.log(1 + (len(ids) - len(at) + 0.5) / (len(at) + 0.5))
                        score[at] += idf * f * (k1 + 1) / (f + norm[at])
                    top = np.argsort(-score)[:300]
                    mine = [(ids[i], float(score[i])) for i in top if score[i] > 0]
                    fused = current(mine, sem, coverage, other, query_weight(entry, qid))
                    kw_scores.append(ndcg_at(docs_of(mine, chunk_doc), qrels[qid]))
                    hy_scores.append(ndcg_at(docs_of(fused, chunk_doc), qrels[qid]))
                print(
                    f"  k1 {k1} b {b}: keyword {np.mean(kw_scores):.4f}  hybrid {np.mean(hy_scores):.4f}",
                    flush=True,
                )
        finally:
            rt.close()


if __name__ == "__main__":
    main()
