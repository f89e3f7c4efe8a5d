"""The eval sets as each run uses them: full test splits, or the quick subsets."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from docshelf.search.evaluate import load_beir

SETS = ["scifact", "nfcorpus", "xquad-en", "xquad-de", "xquad-zh", "cmrc2018-dev"]
LANGUAGE = {"xquad-de": "german", "xquad-zh": "chinese", "cmrc2018-dev": "chinese"}  # else english
# quick mode: (queries, documents) per set; the judged documents of the chosen queries stay in
QUICK = {
    "scifact": (100, 600),
    "nfcorpus": (50, 700),
    "xquad-en": (100, 240),
    "xquad-de": (100, 240),
    "xquad-zh": (100, 240),
    "cmrc2018-dev": (100, 300),
}


@dataclass
class BenchSet:
    name: str
    language: str
    corpus: Path  # BEIR corpus.jsonl (the original or a written subset)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    docs: int
    full_docs: int
    full_queries: int


def load_set(folder: Path, work: Path, quick: bool, seed: int = 13) -> BenchSet:
    data = load_beir(folder, "test")
    language = LANGUAGE.get(folder.name, "english")
    full = BenchSet(
        folder.name,
        language,
        folder / "corpus.jsonl",
        data.queries,
        data.qrels,
        len(data.corpus),
        len(data.corpus),
        len(data.queries),
    )
    if not quick:
        return full
    max_queries, max_docs = QUICK.get(folder.name, (100, 500))
    rng = random.Random(seed)
    order = sorted(data.queries)
    rng.shuffle(order)
    chosen: list[str] = []
    judged: set[str] = set()
    for qid in order:  # take queries while their judged documents fill at most 75% of the corpus
        docs = {d for d in data.qrels.get(qid, {}) if d in data.corpus}
        if len(chosen) >= max_queries:
            break
        if len(judged | docs) <= 0.75 * max_docs:
            chosen.append(qid)
            judged |= docs
    rest = sorted(set(data.corpus) - judged)
    keep = judged | set(rng.sample(rest, max(0, min(len(rest), max_docs - len(judged)))))
    out = work / "sets" / folder.name
    out.mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for doc_id, (title, text) in data.corpus.items():
            if doc_id in keep:
                fh.write(json.dumps({"_id": doc_id, "title": title, "text": text}, ensure_ascii=False) + "\n")
    queries = {q: data.queries[q] for q in chosen}
    qrels = {q: data.qrels[q] for q in chosen}
    return BenchSet(
        folder.name,
        language,
        out / "corpus.jsonl",
        queries,
        qrels,
        len(keep),
        len(data.corpus),
        len(data.queries),
    )
