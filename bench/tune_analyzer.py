"""Compare keyword-analysis variants on train/dev qrels (never test), reusing an eval index.

    python bench/tune_analyzer.py --workdir /tmp/docshelf-eval/e5-scifact \
        --set ../shared/eval-data/scifact --split train --variants default no-compounds ngram=5:10

`--workdir` is an index kept by `bench/eval_all.py` / `docshelf eval --workdir`: its chunks and
vectors are read, nothing is embedded. Each variant's chunks go into a scratch tantivy index;
the table shows keyword-only nDCG@10 and hybrid (z-score fusion) at each dense weight.
Variants: `default`, `no-compounds`, `hyphen` (whole hyphenated words too), `no-alnum`
(no whole letter-digit words like p53), `no-detect` (stems of analyze.languages only), `no-decompound`,
`no-stop` (every stop list off, the CJK one included), `ngram=N:L` (character N-grams of words of
L+ letters). Variants join with `+`.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from docshelf.analyze import Analyzer
from docshelf.analyze import analyzer as analyzer_module
from docshelf.config import load_settings
from docshelf.search.evaluate import doc_ranking, file_name, load_beir, ndcg_at
from docshelf.search.fusion import zscore_combination
from docshelf.store.base import SearchFilter
from docshelf.store.embedded.keyword import KeywordDoc, KeywordIndex
from docshelf.testing import Stages

Ranked = list[tuple[str, float]]
_ORIGINAL = analyzer_module.COMPOUND_RE


def make_analyzer(variant: str) -> tuple[Analyzer, dict[str, float]]:
    """The analyzer for one variant, and its query-side options."""
    analyzer_module.COMPOUND_RE = _ORIGINAL
    options: dict[str, float] = {}
    kwargs: dict[str, object] = {}
    for part in variant.split("+"):
        if part == "no-compounds":
            analyzer_module.COMPOUND_RE = re.compile(r"(?!x)x")
        elif part == "hyphen":
            pattern = _ORIGINAL.pattern.replace(r"[._]", r"[._\-]").replace(r"(?<![\w.])", r"(?<![\w.\-])")
            analyzer_module.COMPOUND_RE = re.compile(pattern)
        elif part == "no-alnum":
            head = _ORIGINAL.pattern.split("|")[0] + ")"
            analyzer_module.COMPOUND_RE = re.compile(head)
        elif part == "no-detect":
            kwargs["detect"] = False
        elif part == "no-decompound":
            kwargs["decompound"] = False
        elif part == "no-stop":  # stop words indexed and searched like any word
            kwargs["stopwords"] = False
        elif part.startswith("ngram="):
            n, min_len = part.split("=")[1].split(":")
            options.update(ngram_n=float(n), ngram_min=float(min_len))
        elif part != "default":
            raise SystemExit(f"unknown variant {part}")
    return Analyzer(**kwargs), options  # type: ignore[arg-type]


def with_ngrams(terms: list[str], opts: dict[str, float]) -> list[str]:
    """Terms plus the character n-grams of long alphabetic ones (dictionary-free decompounding)."""
    if "ngram_n" not in opts:
        return terms
    n, min_len = int(opts["ngram_n"]), int(opts["ngram_min"])
    out = list(terms)
    for t in terms:
        if len(t) >= min_len and t.isalpha():
            out += ["#" + t[i : i + n] for i in range(len(t) - n + 1)]
    return out


def _fused(kw: dict[str, Ranked], sem: dict[str, Ranked], w: float, qid: str) -> Ranked:
    return zscore_combination({"keyword": kw[qid], "semantic": sem[qid]}, {"keyword": 1 - w, "semantic": w})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--set", type=Path, required=True)
    p.add_argument("--split", default="train")
    p.add_argument("--model", default="e5")
    p.add_argument("--variants", nargs="+", default=["default"])
    p.add_argument("--grid", default="0.4,0.5,0.6")
    p.add_argument("--candidates", type=int, default=200)
    args = p.parse_args()
    print(f"$ python {' '.join(sys.argv)}")
    print(f"load average {os.getloadavg()[0]:.2f}")

    data = load_beir(args.set, args.split)
    names = {file_name(d): d for d in data.corpus}
    settings = load_settings()
    settings.store.data_dir = args.workdir / "index"
    settings.embed.model = args.model
    rt = Stages(settings)
    docs = {d.id: d for d in rt.store.iter_documents()}
    chunks = [c for c in rt.store.iter_chunks() if c.doc_id in docs]
    chunk_doc = {c.id: names.get(Path(docs[c.doc_id].path).name, "") for c in chunks}
    flt = SearchFilter()
    sem_lists = {qid: rt.store.vector_search(rt.embedder.embed_query(q), args.candidates, flt)
                 for qid, q in data.queries.items()}  # fmt: skip
    rt.close()
    grid = [float(w) for w in args.grid.split(",")]

    def mean(fn: Callable[[str], Ranked]) -> float:
        return sum(
            ndcg_at(doc_ranking((c for c, _ in fn(q)), chunk_doc.get), data.qrels[q]) for q in data.queries
        ) / len(data.queries)

    print(f"{data.name} {args.split}: {len(data.queries)} queries, {len(chunks)} chunks")
    print(f"semantic {mean(lambda q: sem_lists[q]):.4f}")
    print(f"{'variant':<28} {'index s':>7} {'keyword':>8} " + " ".join(f"hyb {w:<4}" for w in grid))
    for variant in args.variants:
        analyzer, opts = make_analyzer(variant)
        scratch = Path(tempfile.mkdtemp(prefix="h18-kw-"))
        try:
            kw = KeywordIndex(scratch)
            t0 = time.perf_counter()
            batch = []
            for c in chunks:
                d = docs[c.doc_id]
                terms = with_ngrams(analyzer.chunk_terms(d.title, c.heading_path, c.text), opts)
                batch.append(KeywordDoc(c.id, d.id, d.collection, d.lifecycle or "", terms))
            kw.add(batch)
            kw.commit(1)
            index_s = time.perf_counter() - t0
            kw_lists: dict[str, Ranked] = {}
            for qid, q in data.queries.items():
                kw_lists[qid] = kw.search(with_ngrams(analyzer.terms(q), opts), args.candidates)
            kw.release()
            row = [mean(kw_lists.__getitem__)]
            row += [mean(functools.partial(_fused, kw_lists, sem_lists, w)) for w in grid]
            print(f"{variant:<28} {index_s:7.1f} " + " ".join(f"{v:8.4f}" for v in row), flush=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
