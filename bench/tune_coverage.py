"""Per-query fusion weight from keyword coverage: measured on train/dev and the XQuAD sets.

    python bench/tune_coverage.py [--work /tmp/docshelf-eval]

Needs the indexes that `python bench/eval_all.py --model MODEL` leaves in --work. For each
set, prints the mean share of query terms found in the index and nDCG@10 of
z-score fusion under several rules mapping coverage to the semantic weight.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from pathlib import Path

from docshelf.analyze.language import language_of
from docshelf.config import load_settings
from docshelf.runtime import Runtime
from docshelf.search.evaluate import file_name, load_beir, ndcg_at, write_corpus
from docshelf.search.fusion import zscore_combination
from docshelf.store.base import SearchFilter

ROOT = Path(__file__).resolve().parents[1]
# (index coverage c, top keyword hit's coverage h) -> semantic weight
RULES: dict[str, Callable[[float, float, bool], float]] = {
    "fixed 0.2": lambda c, h, x: 0.2,
    "index<0.5 + lang": lambda c, h, x: 0.8 if x else (0.2 if c >= 0.5 else 0.2 + (1 - c / 0.5) * 0.6),
    "index<0.5": lambda c, h, x: 0.2 if c >= 0.5 else 0.2 + (1 - c / 0.5) * 0.6,
    "hit<0.5": lambda c, h, x: 0.2 + (1 - min(c / 0.5, h / 0.5, 1)) * 0.6,
    "hit<0.7": lambda c, h, x: 0.2 + (1 - min(c / 0.5, h / 0.7, 1)) * 0.6,
    "hit<0.7 to 0.6": lambda c, h, x: 0.2 + (1 - min(c / 0.5, h / 0.7, 1)) * 0.4,
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    p.add_argument("--model", default="use", help="the model whose eval indexes to read")
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    args = p.parse_args()
    en = args.eval_data / "xquad-en" / "queries.jsonl"
    runs = [("scifact", "train", None), ("nfcorpus", "dev", None), ("xquad-de", "test", None),
            ("xquad-zh", "test", en), ("xquad-de", "test", en), ("mixed", "test", None)]  # fmt: skip
    for name, split, queries in runs:
        if name == "mixed":
            # English questions, Chinese answers, 1,500 English abstracts as distractors
            data = load_beir(args.eval_data / "xquad-zh", split, en)
            sci = load_beir(args.eval_data / "scifact", "test")
            data.corpus.update({f"sci{k}": v for k, v in list(sci.corpus.items())[:1500]})
            settings = load_settings()
            settings.store.data_dir = args.work / f"{args.model}-mixed" / "index"
            settings.embed.model = args.model
            with Runtime(settings) as rt:
                write_corpus(data, args.work / f"{args.model}-mixed" / "corpus")
                rt.indexer().sync("eval", [args.work / f"{args.model}-mixed" / "corpus"])
        else:
            data = load_beir(args.eval_data / name, split, queries)
        names = {file_name(d): d for d in data.corpus}
        settings = load_settings()
        settings.store.data_dir = args.work / f"{args.model}-{name}" / "index"
        settings.embed.model = args.model
        rt = Runtime(settings)
        chunks = [c for d in rt.store.iter_documents() for c in rt.store.document_chunks(d.id)]
        docs = {d.id: names.get(Path(d.path).name, "") for d in rt.store.iter_documents()}
        chunk_doc = {c.id: docs[c.doc_id] for c in chunks}
        texts = {c.id: c.text for c in chunks}
        rows = []
        for qid, text in data.queries.items():
            terms = rt.analyzer.terms(text)
            kw = rt.store.keyword_search(terms, 200, SearchFilter())
            sem = rt.store.vector_search(rt.embedder.embed_query(text), 200, SearchFilter())
            top = set(rt.analyzer.terms(texts[kw[0][0]])) if kw else set()
            unique = set(terms)
            hit = len(unique & top) / len(unique) if unique else 0.0
            qlang = language_of(text, rt.analyzer.detect_language)
            langs = [language_of(texts[c], rt.analyzer.detect_language) for c, _ in sem[:3]]
            other = sum(lang != qlang for lang in langs) >= 2
            rows.append((qid, rt.store.keyword_coverage(terms), hit, other, kw, sem))
        rt.close()
        scores = {}
        for rule, weight in RULES.items():
            total = 0.0
            for qid, cov, hit, other, kw, sem in rows:
                w = weight(cov, hit, other)
                fused = zscore_combination({"k": kw, "s": sem}, {"k": 1 - w, "s": w})
                ranked = list(dict.fromkeys(chunk_doc[c] for c, _ in fused if c in chunk_doc))
                total += ndcg_at(ranked, data.qrels[qid])
            scores[rule] = total / len(rows)
        label = f"{name} {split}" + (" (English queries)" if queries else "")
        cov, hit = statistics.mean(r[1] for r in rows), statistics.mean(r[2] for r in rows)
        print(f"{label}: coverage index {cov:.2f} / top hit {hit:.2f}; "
              + "; ".join(f"{k} {v:.4f}" for k, v in scores.items()))  # fmt: skip


if __name__ == "__main__":
    main()
