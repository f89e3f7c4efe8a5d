"""Grid-search fusion settings on train/dev qrels (never test) and print the table.

    python bench/tune_fusion.py --workdir /tmp/eval/scifact \
        --set ../shared/eval-data/scifact --split train

`--workdir` is an eval folder kept by `docshelf eval --workdir` (its index is reused,
nothing is embedded again). Ranked lists of both retrievers are fetched once per
query, then every fusion variant is scored on them.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Callable
from pathlib import Path

from docshelf.config import load_settings
from docshelf.runtime import Runtime
from docshelf.search.evaluate import file_name, load_beir, ndcg_at
from docshelf.search.fusion import convex_combination, weighted_rrf, zscore_combination
from docshelf.store.base import SearchFilter

Ranked = list[tuple[str, float]]


def doc_level(ranked: Ranked, chunk_doc: dict[str, str]) -> Ranked:
    """Best chunk per document, in order."""
    seen: dict[str, float] = {}
    for cid, score in ranked:
        doc = chunk_doc.get(cid)
        if doc is not None and doc not in seen:
            seen[doc] = score
    return list(seen.items())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--set", type=Path, required=True)
    p.add_argument("--split", default="train")
    p.add_argument("--model", default="use")
    p.add_argument("--dump", type=Path, help="write the ranked lists as JSON for later runs")
    args = p.parse_args()

    data = load_beir(args.set, args.split)
    names = {file_name(d): d for d in data.corpus}
    settings = load_settings()
    settings.store.data_dir = args.workdir / "index"
    settings.embed.model = args.model
    rt = Runtime(settings)
    chunk_doc = {}
    for doc in rt.store.iter_documents():
        for c in rt.store.document_chunks(doc.id):
            chunk_doc[c.id] = names.get(Path(doc.path).name, "")
    flt = SearchFilter()
    lists = {}
    for qid, text in data.queries.items():
        kw = rt.store.keyword_search(rt.analyzer.terms(text), 200, flt)
        sem = rt.store.vector_search(rt.embedder.embed_query(text), 200, flt)
        lists[qid] = (doc_level(kw, chunk_doc), doc_level(sem, chunk_doc))
    rt.close()
    if args.dump:
        args.dump.write_text(json.dumps(lists))

    def score(fuse: Callable[..., Ranked]) -> float:
        total = 0.0
        for qid, (kw, sem) in lists.items():
            total += ndcg_at([d for d, _ in fuse(kw, sem)], data.qrels[qid])
        return total / len(lists)

    print(f"{data.name} {args.split}: {len(lists)} queries")
    print(f"keyword  {score(lambda kw, sem: kw):.4f}")
    print(f"semantic {score(lambda kw, sem: sem):.4f}")
    fusers: dict[str, Callable[[Ranked, Ranked, float], Ranked]] = {
        "rrf k=10": lambda kw, sem, w: weighted_rrf({"k": kw, "s": sem}, {"k": 1.0, "s": w}, 10),
        "rrf k=60": lambda kw, sem, w: weighted_rrf({"k": kw, "s": sem}, {"k": 1.0, "s": w}, 60),
        "min-max": lambda kw, sem, w: convex_combination({"k": kw, "s": sem}, {"k": 1 - w, "s": w}),
        "z-score": lambda kw, sem, w: zscore_combination({"k": kw, "s": sem}, {"k": 1 - w, "s": w}),
    }
    grid = (0.1, 0.2, 0.3, 0.4, 0.5)
    print("semantic weight " + " ".join(f"{w:>7}" for w in grid))
    for name, fuse in fusers.items():
        row = [score(functools.partial(_apply, fuse, w=w)) for w in grid]
        print(f"{name:<15} " + " ".join(f"{v:7.4f}" for v in row))


def _apply(fuse: Callable[[Ranked, Ranked, float], Ranked], kw: Ranked, sem: Ranked, w: float) -> Ranked:
    return fuse(kw, sem, w)

if __name__ == "__main__":
    main()
