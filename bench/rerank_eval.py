"""nDCG@10 with and without cross-encoder reranking, and the latency it adds; writes docs/benchmarks.md.

    python bench/rerank_eval.py --model onnx:/path/to/ms-marco-MiniLM-L-6-v2 [--queries 100] [--top-n 20 30]
    python bench/rerank_eval.py --stand-in e5 [--queries 30]

Uses the e5 indexes that `bench/eval_all.py --model e5` keeps under --work (builds them if missing).
Each query: a hybrid search for 300 chunks (as `docshelf eval`), documents ranked by their best chunk;
then the first N chunks re-scored by the cross-encoder and put first. The same queries (a seeded
sample of the test split when --queries is given) are scored both ways.

``--stand-in e5`` measures latency only: it runs the bundled multilingual-e5-small graph (12 layers,
384 wide: the shape of the multilingual MiniLM cross-encoders) over the same (query, passage) pairs.
Its scores are not relevance scores, so no nDCG is reported for it. Rows go between
``<!-- rerank:NAME -->`` markers; nothing is typed by hand.
"""

from __future__ import annotations

import argparse
import platform
import random
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from docshelf.config import load_settings
from docshelf.search.evaluate import doc_ranking as ranked_docs
from docshelf.search.evaluate import load_beir, ndcg_at, percentile, write_corpus
from docshelf.search.rerank import Reranker, get_reranker, passage_text, rerank_hits
from docshelf.store.base import SearchFilter
from docshelf.testing import Stages

ROOT = Path(__file__).resolve().parents[1]
CHUNKS = 300


class E5StandIn:
    """The e5 encoder over "query passage" pairs (as passages, truncated at its 512-token window,
    like a cross-encoder's input): a cross-encoder's cost, not its judgement."""

    def __init__(self, runtime: Stages) -> None:
        self.emb: Any = runtime.embedder
        self.name = "stand-in: multilingual-e5-small graph (12x384, int8) over pairs"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        return [float(v[0]) for v in self.emb.embed_documents([f"{query} {p}" for p in passages])]


def doc_ranking(hits: Sequence[Any], names: dict[str, str]) -> list[str]:
    return ranked_docs((Path(hit.path).name for hit in hits), names.get)


def run_set(
    name: str, args: argparse.Namespace, reranker_spec: str | None
) -> tuple[list[dict[str, Any]], int, int]:
    data = load_beir(args.eval_data / name, "test")
    settings = load_settings()
    settings.store.data_dir = args.work / f"e5-{name}" / "index"
    settings.embed.model = "e5"
    settings.rerank.threads = args.threads
    rt = Stages(settings)
    try:
        names = write_corpus(data, args.work / f"e5-{name}" / "corpus")
        rt.indexer().sync("eval", [args.work / f"e5-{name}" / "corpus"])  # no-op when kept
        searcher = rt.searcher()
        reranker: Reranker
        if reranker_spec is None:
            reranker = E5StandIn(rt)
        else:
            settings.rerank.model = reranker_spec
            reranker = get_reranker(settings.rerank)
        qids = sorted(data.queries)
        if args.queries and args.queries < len(qids):
            qids = sorted(random.Random(args.seed).sample(qids, args.queries))
        reranker.score("warm up", ["load the model before timing"])
        flt = SearchFilter(collections=("eval",))
        base, search_ms = [], []
        reranked: dict[int, list[float]] = {n: [] for n in args.top_n}
        rerank_ms: dict[int, list[float]] = {n: [] for n in args.top_n}
        for qid in qids:
            query, rels = data.queries[qid], data.qrels.get(qid, {})
            t0 = time.perf_counter()
            hits = searcher.search(query, k=CHUNKS, mode="hybrid", flt=flt, snippets=False).hits
            search_ms.append((time.perf_counter() - t0) * 1000)
            base.append(ndcg_at(doc_ranking(hits, names), rels))
            for n in args.top_n:
                t0 = time.perf_counter()
                new = rerank_hits(query, hits, reranker, n)
                rerank_ms[n].append((time.perf_counter() - t0) * 1000)
                reranked[n].append(ndcg_at(doc_ranking(new, names), rels))
        count = len(qids)
        rows = [{"set": name, "rerank": "none", "top_n": "", "ndcg10": sum(base) / count,
                 "p50": percentile(search_ms, 0.5), "p95": percentile(search_ms, 0.95)}]  # fmt: skip
        for n in args.top_n:
            quality = None if reranker_spec is None else sum(reranked[n]) / count
            ms = rerank_ms[n]
            rows.append({"set": name, "rerank": reranker.name, "top_n": n, "ndcg10": quality,
                         "p50": percentile(ms, 0.5), "p95": percentile(ms, 0.95)})  # fmt: skip
        tokens = sum(len(passage_text(h)) for h in hits[: max(args.top_n)]) // max(1, max(args.top_n))
        return rows, count, tokens
    finally:
        rt.close()


def table(rows: list[dict[str, Any]], counts: dict[str, tuple[int, int]]) -> str:
    out = [
        "| set | queries | reranker | top N | nDCG@10 | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        nd = "n/a (latency only)" if r["ndcg10"] is None else f"{r['ndcg10']:.4f}"
        what = "hybrid search (300 chunks)" if r["rerank"] == "none" else f"+ rerank: {r['rerank']}"
        cells = [r["set"], counts[r["set"]][0], what, r["top_n"], nd, f"{r['p50']:.0f}", f"{r['p95']:.0f}"]
        out.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(out)


def write_section(path: Path, key: str, text: str) -> None:
    doc = path.read_text(encoding="utf-8")
    pattern = re.compile(rf"<!-- rerank:{re.escape(key)} -->.*?<!-- /rerank:{re.escape(key)} -->", re.S)
    doc = pattern.sub(lambda _: text, doc) if pattern.search(doc) else doc.rstrip() + "\n\n" + text + "\n"
    path.write_text(doc, encoding="utf-8")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", help="rerank model: onnx:<folder> or st:<name or path>")
    what.add_argument("--stand-in", choices=["e5"], help="latency only, with the bundled e5 graph")
    p.add_argument("--sets", nargs="*", default=["scifact", "nfcorpus"])
    p.add_argument("--queries", type=int, default=0, help="seeded sample of test queries (0 = all)")
    p.add_argument("--seed", type=int, default=9)
    p.add_argument("--top-n", type=int, nargs="*", default=[20, 30])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = p.parse_args()

    started = time.time()
    rows: list[dict[str, Any]] = []
    counts: dict[str, tuple[int, int]] = {}
    for name in args.sets:
        set_rows, count, chars = run_set(name, args, args.model)
        rows += set_rows
        counts[name] = (count, chars)
        print(table(set_rows, counts), file=sys.stderr)
    key = "stand-in" if args.model is None else re.sub(r"[^A-Za-z0-9_.-]", "_", args.model.split("/")[-1])
    command = " ".join(["python", "bench/rerank_eval.py", *sys.argv[1:]])
    sizes = ", ".join(f"{n}: ~{c[1]} characters per passage" for n, c in counts.items())
    section = [
        f"<!-- rerank:{key} -->",
        f"`{command}`: {time.strftime('%Y-%m-%d')}, {platform.machine()}, one thread, "
        f"run took {(time.time() - started) / 60:.0f} min; reranked passages {sizes}.",
        "",
        table(rows, counts),
        f"<!-- /rerank:{key} -->",
    ]
    write_section(args.out, key, "\n".join(section))


if __name__ == "__main__":
    main()
