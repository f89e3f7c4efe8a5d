"""Does one fused list over several phrasings of a question beat the best single phrasing?

    python bench/multi_query_eval.py [--sets xquad-de xquad-zh] [--queries 300]

The phrasings are the ones an agent has at hand: the user's English question and its translation
into the corpus language (XQuAD's parallel questions share ids). Each phrasing runs a hybrid search
for 300 chunks; the lists are fused with reciprocal-rank fusion (k=60, equal weights), documents
ranked by their best chunk. Rows go between ``<!-- multiquery -->`` markers in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docshelf.config import load_settings
from docshelf.runtime import Runtime
from docshelf.search.evaluate import load_beir, ndcg_at, write_corpus
from docshelf.store.base import SearchFilter

ROOT = Path(__file__).resolve().parents[1]
CHUNKS = 300
RRF_K = 60


def rrf(lists: Sequence[Sequence[Any]]) -> list[Any]:
    """Hits of several ranked lists by summed 1/(k + rank), first occurrence kept."""
    score: dict[str, float] = {}
    first: dict[str, Any] = {}
    for hits in lists:
        for rank, hit in enumerate(hits, start=1):
            score[hit.chunk_id] = score.get(hit.chunk_id, 0.0) + 1.0 / (RRF_K + rank)
            first.setdefault(hit.chunk_id, hit)
    return [first[c] for c in sorted(score, key=lambda c: -score[c])]


def docs_of(hits: Sequence[Any], names: dict[str, str]) -> list[str]:
    ranked: list[str] = []
    for hit in hits:
        doc = names.get(Path(hit.path).name)
        if doc is not None and doc not in ranked:
            ranked.append(doc)
    return ranked


def run_set(name: str, args: argparse.Namespace) -> list[tuple[str, str, int, float]]:
    native = load_beir(args.eval_data / name, "test")
    english = load_beir(args.eval_data / name, "test", args.eval_data / "xquad-en" / "queries.jsonl")
    settings = load_settings()
    settings.store.data_dir = args.work / f"e5-{name}" / "index"
    settings.embed.model = "e5"
    rt = Runtime(settings)
    try:
        names = write_corpus(native, args.work / f"e5-{name}" / "corpus")
        rt.indexer().sync("eval", [args.work / f"e5-{name}" / "corpus"])
        searcher = rt.searcher()
        flt = SearchFilter(collections=("eval",))
        qids = sorted(set(native.queries) & set(english.queries))
        if args.queries and args.queries < len(qids):
            qids = sorted(random.Random(args.seed).sample(qids, args.queries))
        scores: dict[str, list[float]] = {"native": [], "english": [], "fused": []}
        for qid in qids:
            rels = native.qrels.get(qid, {})
            runs = [
                searcher.search(q.queries[qid], k=CHUNKS, mode="hybrid", flt=flt, snippets=False).hits
                for q in (native, english)
            ]
            scores["native"].append(ndcg_at(docs_of(runs[0], names), rels))
            scores["english"].append(ndcg_at(docs_of(runs[1], names), rels))
            scores["fused"].append(ndcg_at(docs_of(rrf(runs), names), rels))
        labels = {
            "native": f"{name} question alone",
            "english": "English question alone",
            "fused": "both, fused (RRF)",
        }
        return [(name, labels[key], len(qids), sum(v) / len(v)) for key, v in scores.items()]
    finally:
        rt.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", nargs="*", default=["xquad-de", "xquad-zh"])
    p.add_argument("--queries", type=int, default=0, help="seeded sample of test queries (0 = all)")
    p.add_argument("--seed", type=int, default=9)
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = p.parse_args()
    started = time.time()
    rows = [row for name in args.sets for row in run_set(name, args)]
    lines = ["| corpus | phrasings | queries | nDCG@10 |", "|---|---|---|---|"]
    lines += [f"| {s} | {what} | {n} | {nd:.4f} |" for s, what, n, nd in rows]
    print("\n".join(lines), file=sys.stderr)
    command = " ".join(["python", "bench/multi_query_eval.py", *sys.argv[1:]])
    took = (time.time() - started) / 60
    text = "\n".join([
        "<!-- multiquery -->",
        f"`{command}`: {time.strftime('%Y-%m-%d')}, e5, hybrid; run took {took:.0f} min",
        "",
        *lines,
        "<!-- /multiquery -->",
    ])  # fmt: skip
    doc = args.out.read_text(encoding="utf-8")
    pattern = re.compile(r"<!-- multiquery -->.*?<!-- /multiquery -->", re.S)
    doc = pattern.sub(lambda _: text, doc) if pattern.search(doc) else doc.rstrip() + "\n\n" + text + "\n"
    args.out.write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    main()
