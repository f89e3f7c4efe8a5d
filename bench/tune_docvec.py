"""Does a whole-document e5 vector help? Mixes it into each chunk's dense score (train/dev only).

    python bench/tune_docvec.py --workdir /tmp/docshelf-eval/e5-scifact \
        --set ../shared/eval-data/scifact --split train

`--workdir` is an index kept by `bench/eval_all.py`; its chunk vectors are read back, each corpus
document is embedded whole once (cached as docvec.npy in the workdir). A chunk's dense score
becomes a * cos(query, chunk) + (1 - a) * cos(query, its document), exact search over every
chunk; the table shows semantic and hybrid (z-score fusion with the kept keyword index) nDCG@10.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from docshelf.config import load_settings
from docshelf.runtime import Runtime
from docshelf.search.evaluate import doc_ranking, file_name, load_beir, ndcg_at
from docshelf.search.fusion import zscore_combination
from docshelf.store.base import SearchFilter

Ranked = list[tuple[str, float]]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--set", type=Path, required=True)
    p.add_argument("--split", default="train")
    p.add_argument("--candidates", type=int, default=200)
    p.add_argument("--mix", default="1.0,0.8,0.6,0.5,0.4,0.2,0.0")
    args = p.parse_args()
    print(f"$ python {' '.join(sys.argv)}")
    print(f"load average {os.getloadavg()[0]:.2f}")
    data = load_beir(args.set, args.split)
    by_name = {file_name(d): d for d in data.corpus}
    settings = load_settings()
    settings.store.data_dir = args.workdir / "index"
    settings.embed.model = "e5"
    rt = Runtime(settings)
    docs = {d.id: d for d in rt.store.iter_documents()}
    chunks = [c for c in rt.store.iter_chunks() if c.doc_id in docs]
    chunk_doc = {c.id: by_name.get(Path(docs[c.doc_id].path).name, "") for c in chunks}
    corpus_ids = sorted({d for d in chunk_doc.values() if d})
    cache = args.workdir / "docvec.npy"
    if cache.exists():
        doc_vecs = np.load(cache)
    else:
        texts = [(t + "\n" if t else "") + x for t, x in (data.corpus[d] for d in corpus_ids)]
        started = time.perf_counter()
        parts = [rt.embedder.embed_documents(texts[i : i + 32]) for i in range(0, len(texts), 32)]
        doc_vecs = np.concatenate(parts)
        print(f"embedded {len(texts)} documents whole in {time.perf_counter() - started:.0f} s")
        np.save(cache, doc_vecs)
    row_of = {d: i for i, d in enumerate(corpus_ids)}
    kept = [c for c in chunks if chunk_doc[c.id]]
    ids = [c.id for c in kept]
    stored = rt.store.cached_vectors([c.embed_key for c in kept])
    chunk_mat = np.stack([stored[c.embed_key] for c in kept])
    doc_mat = doc_vecs[[row_of[chunk_doc[c.id]] for c in kept]]
    flt, n = SearchFilter(), args.candidates
    query_vecs = {q: rt.embedder.embed_query(text) for q, text in data.queries.items()}
    kw_lists = {q: rt.store.keyword_search(rt.analyzer.terms(t), n, flt) for q, t in data.queries.items()}
    rt.close()

    def mean(fn: Callable[[str], Ranked]) -> float:
        return sum(
            ndcg_at(doc_ranking((c for c, _ in fn(q)), chunk_doc.get), data.qrels[q]) for q in data.queries
        ) / len(data.queries)

    print(f"{data.name} {args.split}: {len(data.queries)} queries, {len(kept)} chunks")
    print("a      semantic  hyb 0.4  hyb 0.5  hyb 0.6")
    for a in (float(x) for x in args.mix.split(",")):
        lists: dict[str, Ranked] = {}
        for q, vec in query_vecs.items():
            scores = a * (chunk_mat @ vec) + (1 - a) * (doc_mat @ vec)
            top = np.argpartition(-scores, min(n, len(ids) - 1))[:n]
            lists[q] = [(ids[i], float(scores[i])) for i in top[np.argsort(-scores[top])]]
        row = [mean(lists.__getitem__)]
        for w in (0.4, 0.5, 0.6):
            weights = {"k": 1 - w, "s": w}
            row.append(
                mean(lambda q, d=lists, ws=weights: zscore_combination({"k": kw_lists[q], "s": d[q]}, ws))
            )
        print(f"{a:<6} " + " ".join(f"{v:8.4f}" for v in row), flush=True)


if __name__ == "__main__":
    main()
