"""Queries whose keyword list has one hit (or all its scores alike): hybrid nDCG@10 with the z-score
fusion of before round seven (such a list standardised to 0, its floor too) and with today's.

    git show e0dcf54:src/docshelf/search/fusion.py > /tmp/fusion_old.py
    python bench/tune_single_hit.py --old /tmp/fusion_old.py nfcorpus:test nfcorpus:dev xquad-de:test

Needs the eval indexes kept by bench/eval_all.py in /tmp/docshelf-eval/e5-<set>/index.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from kept_index import kept_set

import docshelf.search.fusion as fusion_module
from docshelf.runtime import Runtime
from docshelf.search.evaluate import doc_ranking, ndcg_at
from docshelf.store.base import SearchFilter


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("sets", nargs="+", help="NAME:SPLIT, or QUESTIONS>NAME:SPLIT (another set's questions)")
    p.add_argument("--old", type=Path, required=True, help="fusion.py of the commit to compare with")
    p.add_argument("--eval-data", type=Path, default=Path("/work/shared/eval-data"))
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    args = p.parse_args()
    print(f"$ python {' '.join(sys.argv)}")
    spec = importlib.util.spec_from_file_location("fusion_old", args.old)
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    # an older zscore_combination takes fewer of the arguments fuse_hybrid passes: the rest dropped
    extra = len(inspect.signature(old.zscore_combination).parameters) - 2

    def old_fusion(lists: Any, weights: Any, *rest: float) -> Any:
        return old.zscore_combination(lists, weights, *rest[:extra])

    fusions = (old_fusion, fusion_module.zscore_combination)
    for item in args.sets:
        label, split = item.split(":")
        questions, _, name = label.rpartition(">")
        data, by_name, settings = kept_set(name, split, args.eval_data, args.work, questions or None)
        with Runtime(settings) as rt:
            search = rt.searcher()
            before = after = 0.0
            count = 0
            for qid, query in data.queries.items():
                found = rt.store.keyword_search(rt.analyzer.terms(query), 300, SearchFilter())
                if not found or len({round(s, 9) for _, s in found}) > 1:
                    continue
                scores = []
                for fuse in fusions:
                    fusion_module.zscore_combination = fuse
                    hits = search.search(query, k=300, mode="hybrid", snippets=False).hits
                    ranked = doc_ranking((Path(h.path).name for h in hits), by_name.get)
                    scores.append(ndcg_at(ranked, data.qrels[qid]))
                fusion_module.zscore_combination = fusions[1]
                count += 1
                before, after = before + scores[0], after + scores[1]
                print(f"{label} {split} {qid}: {scores[0]:.3f} -> {scores[1]:.3f}")
        change = (after - before) / max(1, len(data.queries))
        print(f"{label} {split}: {count} such queries of {len(data.queries)}; set nDCG@10 {change:+.4f}")


if __name__ == "__main__":
    main()
