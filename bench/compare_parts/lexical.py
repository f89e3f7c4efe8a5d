"""Reference BM25 engines: bm25s (three tokenizers) and tantivy with its default analyzer.

Runs in the bench venv. Each indexes whole documents (title + text), as BEIR's BM25 baselines do.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import dir_bytes, doc_text, iter_corpus, peak_rss_mb

ROOT = Path(__file__).resolve().parents[2]
_STOP = {"english": "en", "german": "de"}
_QUERY_JUNK = re.compile(r"[^\w\s]+")

Tokenize = Callable[[list[str]], list[list[str]]]


def _bm25s_tokenizer(variant: str, language: str) -> tuple[Tokenize, str]:
    import bm25s

    if variant == "regex":  # bm25s.tokenize as called with no options
        return (lambda texts: bm25s.tokenize(texts, return_ids=False, show_progress=False)), "default"
    if variant == "stem":
        if language not in _STOP:  # no Snowball stemmer or stop list for Chinese in bm25s
            return (lambda texts: bm25s.tokenize(texts, return_ids=False, show_progress=False)), "default"
        import Stemmer

        stemmer = Stemmer.Stemmer(language)
        stop = _STOP[language]
        return (
            lambda texts: bm25s.tokenize(
                texts, stopwords=stop, stemmer=stemmer.stemWords, return_ids=False, show_progress=False
            )
        ), f"{language} Snowball"
    # docshelf's analyzer (its source tree; needs only PyStemmer), to separate analyzer from engine
    sys.path.insert(0, str(ROOT / "src"))
    from docshelf.analyze import Analyzer

    analyzer = Analyzer()
    return (lambda texts: [analyzer.terms(t) for t in texts]), "docshelf analyzer"


class _Bm25s:
    def __init__(self, variant: str, language: str, units: list[str]) -> None:
        import bm25s

        self.tokenize, self.label = _bm25s_tokenizer(variant, language)
        self.retriever = bm25s.BM25()
        self.retriever.index(self.tokenize(units), show_progress=False)
        self.n = len(units)
        self.vocab = set(self.retriever.vocab_dict)

    def search(self, query: str, k: int) -> list[int]:
        tokens = [t for t in self.tokenize([query])[0] if t in self.vocab]
        if not tokens:
            return []
        ids, _ = self.retriever.retrieve([tokens], k=min(k, self.n), show_progress=False, n_threads=1)
        return [int(i) for i in ids[0]]

    def save(self, folder: Path) -> int:
        self.retriever.save(str(folder), show_progress=False)
        return dir_bytes(folder)


class _Tantivy:
    def __init__(self, units: list[str], folder: Path) -> None:
        import tantivy

        folder.mkdir(parents=True, exist_ok=True)
        builder = tantivy.SchemaBuilder()
        builder.add_integer_field("n", stored=True, indexed=False, fast=False)
        builder.add_text_field("body", stored=False)  # tokenizer "default"
        self.index = tantivy.Index(builder.build(), path=str(folder))
        writer = self.index.writer(heap_size=128_000_000, num_threads=1)
        for i, text in enumerate(units):
            writer.add_document(tantivy.Document(n=i, body=text))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()
        self.folder = folder
        self.label = "default"

    def search(self, query: str, k: int) -> list[int]:
        text = _QUERY_JUNK.sub(" ", query).lower().strip()  # lower: no AND/OR/NOT operators
        if not text:
            return []
        parsed, _ = self.index.parse_query_lenient(text, ["body"])
        hits = self.searcher.search(parsed, k).hits
        return [int(self.searcher.doc(addr)["n"][0]) for _, addr in hits]

    def save(self, folder: Path) -> int:
        return dir_bytes(self.folder)


def _build(system: str, language: str, units: list[str], folder: Path) -> _Bm25s | _Tantivy:
    if system == "tantivy":
        return _Tantivy(units, folder)
    return _Bm25s(system.removeprefix("bm25s-"), language, units)


def run_eval(job: dict[str, Any]) -> dict[str, Any]:
    rows = list(iter_corpus(Path(job["corpus"])))
    ids = [r[0] for r in rows]
    units = [doc_text(r[1], r[2]) for r in rows]
    work = Path(job["work"])
    t0 = time.perf_counter()
    engine = _build(job["system"], job["language"], units, work / "index")
    index_s = time.perf_counter() - t0
    rankings: dict[str, list[str]] = {}
    latency: list[float] = []
    for qid, text in job["queries"].items():
        t = time.perf_counter()
        hits = engine.search(text, 100)
        latency.append((time.perf_counter() - t) * 1000)
        rankings[qid] = [ids[i] for i in hits]
    return {
        "index_s": index_s,
        "docs": len(ids),
        "units": len(units),
        "unit": "docs",
        "disk_bytes": engine.save(work / "saved"),
        "peak_rss_mb": peak_rss_mb(),
        "runs": [{"mode": "keyword", "tokenizer": engine.label, "rankings": rankings, "latency_ms": latency}],
    }


def run_scale(job: dict[str, Any], units: list[str]) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(dir=job["work"]))
    t0 = time.perf_counter()
    engine = _build(job["system"], "english", units, folder)
    build_s = time.perf_counter() - t0
    latency = []
    for text in job["queries"]:
        t = time.perf_counter()
        engine.search(text, 10)
        latency.append((time.perf_counter() - t) * 1000)
    return {
        "build_s": build_s,
        "units": len(units),
        "disk_bytes": engine.save(folder / "saved"),
        "peak_rss_mb": peak_rss_mb(),
        "latency_ms": {"keyword": latency},
    }
