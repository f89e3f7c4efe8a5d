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
from collections.abc import Callable
from pathlib import Path

from docshelf.config import load_settings
from docshelf.search.evaluate import file_name, load_beir, ndcg_at
from docshelf.search.fusion import convex_combination, weighted_rrf, zscore_combination
from docshelf.store.base import SearchFilter
from docshelf.testing import Stages

Ranked = list[tuple[str, float]]


def doc_level(ranked: Ranked, chunk_doc: dict[str, str]) -> Ranked:
    """Best chunk per document, in order."""
    seen: dict[str, float] = {}
    if chunk_doc and not any(cid in chunk_doc for cid, _ in ranked[:1]):
        return ranked  # already document ids
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
    p.add_argument("--grid", default="0.1,0.2,0.3,0.4,0.5", help="dense weights to try")
    p.add_argument("--candidates", type=int, default=100, help="hits per retriever, as search.candidates")
    p.add_argument(
        "--level", choices=("chunk", "doc"), default="chunk",
        help="fuse chunk lists (what search does) or best-chunk-per-document lists",
    )  # fmt: skip
    args = p.parse_args()

    data = load_beir(args.set, args.split)
    names = {file_name(d): d for d in data.corpus}
    settings = load_settings()
    settings.store.data_dir = args.workdir / "index"
    settings.embed.model = args.model
    rt = Stages(settings)
    chunk_doc = {}
    for doc in rt.store.iter_documents():
        for c in rt.store.document_chunks(doc.id):
            chunk_doc[c.id] = names.get(Path(doc.path).name, "")
    flt = SearchFilter()
    lists = {}
    for qid, text in data.queries.items():
        kw = rt.store.keyword_search(rt.analyzer.terms(text), args.candidates, flt)
        sem = rt.store.vector_search(rt.embedder.embed_query(text), args.candidates, flt)
        if args.level == "doc":
            kw, sem = doc_level(kw, chunk_doc), doc_level(sem, chunk_doc)
        lists[qid] = (kw, sem)
    rt.close()

    def score(fuse: Callable[..., Ranked]) -> float:
        total = 0.0
        for qid, (kw, sem) in lists.items():
            ranked = (
                [d for d, _ in doc_level(fuse(kw, sem), chunk_doc)]
                if args.level == "chunk"
                else [d for d, _ in fuse(kw, sem)]
            )
            total += ndcg_at(ranked, data.qrels[qid])
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
    grid = tuple(float(w) for w in args.grid.split(","))
    print("semantic weight " + " ".join(f"{w:>7}" for w in grid))
    for name, fuse in fusers.items():
        row = [score(functools.partial(_apply, fuse, w=w)) for w in grid]
        print(f"{name:<15} " + " ".join(f"{v:7.4f}" for v in row))


def _apply(fuse: Callable[[Ranked, Ranked, float], Ranked], kw: Ranked, sem: Ranked, w: float) -> Ranked:
    return fuse(kw, sem, w)


if __name__ == "__main__":
    main()
