"""Does taking the corpus mean out of the query vector help? (hubness reduction, train/dev only)

    python bench/tune_centering.py scifact:train nfcorpus:dev --betas 0,0.25,0.5,0.75,1

Dense scores q·d rank "hub" chunks (near the corpus mean, close to every query) high for
unrelated queries. Searching with q - beta * mean (mean of the index's chunk vectors) scores
each chunk by q·d - beta * mean·d: the same ANN index, only the query changes. Each row runs the
real searcher (`Searcher.search`, semantic and hybrid, k=300) with the query vector swapped.
Needs the eval indexes kept by bench/eval_all.py in /tmp/docshelf-eval/e5-<set>/index.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from kept_index import kept_set

from docshelf.runtime import Runtime
from docshelf.search.evaluate import doc_ranking, ndcg_at


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("sets", nargs="+", help="NAME:SPLIT")
    p.add_argument("--betas", default="0,0.25,0.5,0.75,1")
    p.add_argument("--renorm", action="store_true", help="unit-length query after centering")
    p.add_argument("--eval-data", type=Path, default=Path("/work/shared/eval-data"))
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    args = p.parse_args()
    print(f"$ python {' '.join(sys.argv)}")
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    betas = [float(b) for b in args.betas.split(",")]
    for item in args.sets:
        name, split = item.split(":")
        data, by_name, settings = kept_set(name, split, args.eval_data, args.work)
        with Runtime(settings) as rt:
            keys = [c.embed_key for c in rt.store.iter_chunks()]
            stored = rt.store.cached_vectors(keys)
            mean = np.mean(np.stack([stored[k] for k in keys]), axis=0)
            assert rt.embedder is not None
            plain = rt.embedder.embed_query
            cache: dict[str, np.ndarray] = {}

            def embedded(text: str, cache: dict[str, np.ndarray] = cache, plain: Any = plain) -> np.ndarray:
                if text not in cache:
                    cache[text] = plain(text)
                return cache[text]

            search = rt.searcher()
            print(f"{name} {split}: {len(data.queries)} queries, {len(keys)} chunks, "
                  f"|mean| {np.linalg.norm(mean):.3f}")  # fmt: skip
            print("beta   semantic  hybrid")
            for beta in betas:
                started = time.perf_counter()

                def shifted(text: str, b: float = beta, mean: np.ndarray = mean) -> np.ndarray:
                    vec = embedded(text) - b * mean
                    return (vec / np.linalg.norm(vec) if args.renorm else vec).astype(np.float32)

                rt.embedder.embed_query = shifted  # type: ignore[method-assign]
                row = []
                for mode in ("semantic", "hybrid"):
                    total = 0.0
                    for qid, query in data.queries.items():
                        hits = search.search(query, k=300, mode=mode, snippets=False).hits  # type: ignore[arg-type]
                        ranked = doc_ranking((Path(h.path).name for h in hits), by_name.get)
                        total += ndcg_at(ranked, data.qrels[qid])
                    row.append(total / len(data.queries))
                took = time.perf_counter() - started
                print(f"{beta:<6} {row[0]:8.4f} {row[1]:8.4f}   ({took:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
