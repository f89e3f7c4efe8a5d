"""Fusion rules against "hybrid never below its better half" on every set (train/dev, QA questions).

    python bench/tune_guard.py --work /tmp/docshelf-eval --cache /tmp/guard.pkl [--rebuild]
    python bench/tune_guard.py --work W --cache C --sets none --set-dirs /tmp/bible-sets/bible-*

Step 1 (once, cached in --cache): for each set, the searcher's own inputs per query are recorded
through the real path (`Searcher` analyzer, embedder, `store.candidates`, the other-language check):
both candidate lists, the term coverage and the language flag. Step 2: every fusion rule below is
scored on them (nDCG@10 of documents by best chunk), next to keyword and semantic alone.
Indexes are the ones `bench/eval_all.py --work` keeps; scifact and nfcorpus use train / dev qrels,
the QA sets their own questions (they have no other split).
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docshelf.config import load_settings
from docshelf.search.evaluate import file_name, load_beir, ndcg_at, write_corpus
from docshelf.search.fusion import (
    dense_share,
    fuse_hybrid,
    fusion_weights,
    is_question,
    zscore_combination,
)
from docshelf.shelf.opening import repair_keywords
from docshelf.store.base import SearchFilter
from docshelf.testing import Stages

ROOT = Path(__file__).resolve().parents[1]
Ranked = list[tuple[str, float]]
# (label, index set, qrels split, questions from)
SETS = [
    ("scifact train", "scifact", "train", None),
    ("nfcorpus dev", "nfcorpus", "dev", None),
    ("xquad-en", "xquad-en", "test", None),
    ("xquad-de", "xquad-de", "test", None),
    ("xquad-zh", "xquad-zh", "test", None),
    ("cmrc2018-dev", "cmrc2018-dev", "test", None),
    ("en → de", "xquad-de", "test", "xquad-en"),
    ("en → zh", "xquad-zh", "test", "xquad-en"),
    ("de → en", "xquad-en", "test", "xquad-de"),
    ("zh → en", "xquad-en", "test", "xquad-zh"),
    # reported, never tuned on
    ("scifact test", "scifact", "test", None),
    ("nfcorpus test", "nfcorpus", "test", None),
]


def record(
    work: Path,
    data_root: Path,
    model: str,
    candidates: int,
    only: list[str] | None,
    extra: list[Path] = (),  # type: ignore[assignment]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    sets = [(label, data_root / n, split, src and data_root / src) for label, n, split, src in SETS]
    for spec in extra:  # PATH or PATH:split
        folder, _, split = str(spec).partition(":")
        sets.append((f"{Path(folder).name} {split or 'test'}", Path(folder), split or "test", None))
    extra = [Path(str(spec).partition(":")[0]) for spec in extra]
    for label, folder, split, source in sets:
        if only and label not in only and folder not in extra:
            continue
        data = load_beir(folder, split, source / "queries.jsonl" if source else None)
        settings = load_settings()
        settings.store.data_dir = work / f"{model}-{folder.name}" / "index"
        settings.embed.model = model
        if not settings.store.data_dir.exists() and folder not in extra:
            print(f"{label}: no index under {settings.store.data_dir}, skipped", file=sys.stderr)
            continue
        rt = Stages(settings)
        try:
            if folder in extra:  # a set of our own (bench/make_bible_sets.py): indexed here, as eval_all does
                corpus = work / f"{model}-{folder.name}" / "corpus"
                write_corpus(data, corpus)
                rt.indexer().sync("eval", [corpus])
            repair_keywords(rt.store)  # an index built by another analyzer is re-analysed first, as at open
            searcher = rt.searcher()
            names = {file_name(d): d for d in data.corpus}
            chunk_doc = {}
            for doc in rt.store.iter_documents():
                for c in rt.store.document_chunks(doc.id):
                    chunk_doc[c.id] = names.get(Path(doc.path).name, "")
            rows = []
            n_terms: dict[str, int] = {}
            for qid, text in data.queries.items():
                terms = [t.term for t in searcher.analyzer.tokens(text)]
                n_terms[qid] = len(terms)
                vec = rt.embedder.embed_query(text)
                lists, coverage = rt.store.candidates(terms, vec, candidates, SearchFilter(), True, True)
                other = searcher.other_language(text, lists)
                rows.append((qid, lists.get("keyword", []), lists.get("semantic", []), coverage, other))
            e = rt.embedder
            asked = {q for q, text in data.queries.items() if is_question(text)}
            out[label] = {"rows": rows, "qrels": data.qrels, "chunk_doc": chunk_doc, "questions": asked,
                          "weight": e.fusion_weight, "question_weight": e.question_weight,
                          "terms": n_terms}  # fmt: skip
            print(f"{label}: {len(rows)} queries recorded", file=sys.stderr, flush=True)
        finally:
            rt.close()
    return out


def docs_of(ranked: Ranked, chunk_doc: dict[str, str]) -> list[str]:
    seen: list[str] = []
    for cid, _ in ranked:
        d = chunk_doc.get(cid)
        if d and d not in seen:
            seen.append(d)
            if len(seen) >= 10:
                break
    return seen


Rule = Callable[[Ranked, Ranked, float, bool, float], Ranked]


def current(kw: Ranked, sem: Ranked, coverage: float, other: bool, base: float) -> Ranked:
    return fuse_hybrid(load_settings().search, {"keyword": kw, "semantic": sem}, coverage, other, base)


def no_lead(kw: Ranked, sem: Ranked, coverage: float, other: bool, base: float) -> Ranked:
    """The rule before the keyword lead (fusion_weights alone)."""
    weights = fusion_weights(load_settings().search, coverage, other, base)
    return zscore_combination({"keyword": kw, "semantic": sem}, weights)


def by_doc(ranked: Ranked, chunk_doc: dict[str, str]) -> Ranked:
    """Each document's best chunk only (the others dropped), in order."""
    seen: set[str] = set()
    out: Ranked = []
    for cid, score in ranked:
        d = chunk_doc.get(cid, cid)
        if d not in seen:
            seen.add(d)
            out.append((cid, score))
    return out


CHUNK_DOC: dict[str, str] = {}


def doc_level(kw: Ranked, sem: Ranked, coverage: float, other: bool, base: float) -> Ranked:
    return current(by_doc(kw, CHUNK_DOC), by_doc(sem, CHUNK_DOC), coverage, other, base)


def weight(share: float) -> Rule:
    def rule(kw: Ranked, sem: Ranked, coverage: float, other: bool, base: float) -> Ranked:
        return current(kw, sem, coverage, other, share)

    return rule


def head(depth: int) -> Rule:
    """z-scores over each list's first ``depth`` candidates only (the tail left out of the stats)."""

    def rule(kw: Ranked, sem: Ranked, coverage: float, other: bool, base: float) -> Ranked:
        fused = current(kw[:depth], sem[:depth], coverage, other, base)
        seen = {c for c, _ in fused}
        return fused + [x for x in current(kw, sem, coverage, other, base) if x[0] not in seen]

    return rule


def doc_sum(extra: float) -> Rule:
    """Fused chunk scores, then each chunk also gets ``extra`` x its document's other chunks' scores."""

    def rule(kw: Ranked, sem: Ranked, coverage: float, other: bool, base: float) -> Ranked:
        fused = current(kw, sem, coverage, other, base)
        lo = min((s for _, s in fused), default=0.0)
        per_doc: dict[str, list[float]] = {}
        for cid, score in fused:
            per_doc.setdefault(CHUNK_DOC.get(cid, cid), []).append(score - lo)
        out = [(cid, score + extra * (sum(per_doc[CHUNK_DOC.get(cid, cid)]) - (score - lo)))
               for cid, score in fused]  # fmt: skip
        return sorted(out, key=lambda kv: -kv[1])

    return rule


RULES: dict[str, Rule] = {
    "current": current, "no-lead": no_lead, "doc": doc_level, "w0.4": weight(0.4), "w0.6": weight(0.6),
    "head50": head(50), "head100": head(100), "dsum0.1": doc_sum(0.1), "dsum0.3": doc_sum(0.3),
}  # fmt: skip


def query_weight(entry: dict[str, Any], qid: str) -> float:
    """The model's dense share for this query, as the searcher picks it (a cache from before
    question_weight has every query at the one weight; one from before the term counts has no
    long-statement rule)."""
    weight = float(entry["weight"])
    asked = qid in entry.get("questions", ())
    terms = entry.get("terms", {}).get(qid, 0)  # none recorded: 0, which leaves a statement's weight as it is
    return dense_share(weight, float(entry.get("question_weight", weight)), asked, terms)


def _mean(entry: dict[str, Any], fn: Rule) -> float:
    rows, qrels, cd = entry["rows"], entry["qrels"], entry["chunk_doc"]
    scores = (
        ndcg_at(docs_of(fn(k, s, c, o, query_weight(entry, q)), cd), qrels[q]) for q, k, s, c, o in rows
    )
    return sum(scores) / len(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    p.add_argument("--cache", type=Path, required=True)
    p.add_argument("--rebuild", action="store_true")
    p.add_argument("--model", default="e5")
    p.add_argument("--candidates", type=int, default=200, help="as search.candidates and `docshelf eval`")
    p.add_argument("--rules", nargs="*", default=None)
    p.add_argument("--sets", nargs="*", default=None, help="labels to record (default: all)")
    p.add_argument("--set-dirs", nargs="*", type=Path, default=[], help="extra BEIR folders, PATH[:split]")
    args = p.parse_args()
    print(f"$ python {' '.join(sys.argv)}\nload average {os.getloadavg()[0]:.2f}")
    if args.rebuild or not args.cache.exists():
        args.cache.write_bytes(
            pickle.dumps(
                record(
                    args.work,
                    args.eval_data,
                    args.model,
                    args.candidates,
                    args.sets,
                    args.set_dirs,
                )
            )
        )
    cache = pickle.loads(args.cache.read_bytes())
    rules = {n: RULES[n] for n in (args.rules or RULES)}
    print(f"{'set':<14} {'keyword':>8} {'semantic':>8} " + " ".join(f"{n:>10}" for n in rules))
    for label, entry in cache.items():
        CHUNK_DOC.clear()
        CHUNK_DOC.update(entry["chunk_doc"])
        kw = _mean(entry, lambda k, s, c, o, b: k)
        sem = _mean(entry, lambda k, s, c, o, b: s)
        cells = []
        for rule in rules.values():
            v = _mean(entry, rule)
            cells.append(f"{v:.4f}{'!' if v < max(kw, sem) - 0.005 else ' '}")
        print(f"{label:<14} {kw:8.4f} {sem:8.4f} " + " ".join(f"{c:>10}" for c in cells), flush=True)
    print("! = below max(keyword, semantic) - 0.005")


if __name__ == "__main__":
    main()
