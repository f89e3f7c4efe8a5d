"""Extraction fidelity on real files: does the index hold what each file holds, on the right page?

    python bench/fidelity.py [--realdocs ../shared/realdocs] [--model e5] [--json out.json]

Indexes ``realdocs/files`` through the indexer (parse, chunk, embed, store) into a throwaway data
dir and scores the stored chunks against ``realdocs/truth.jsonl`` (format in its README):

- word recall per format (mean over files; a skipped or zero-chunk file counts 0; files whose truth
  has a ``note``, i.e. expected to be unreadable, are left out and listed with the skip reason);
- recall per part (headers, footnotes, content controls, ...) over all files;
- PDF page accuracy: of a page's truth words found anywhere in the document, the share found in a
  chunk citing that page (mean over pages), and citation precision the other way round;
- skipped files and zero-chunk documents with their reasons, and tracebacks logged while indexing.

Goals (issue 16): recall >= 0.97 per format, page accuracy >= 0.99, no unexplained zero-chunk
document, no traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import re
import shlex
import sys
import tempfile
import time
import unicodedata
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

from docshelf.config import load_settings
from docshelf.testing import Stages
from docshelf.types import Chunk

ROOT = Path(__file__).resolve().parents[1]
_RUN = re.compile(r"[^\W\d_]+")
_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3040-\u30ff\u3100-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff65-\uffdc\U00020000-\U0003134f]+"
)
GOAL_RECALL, GOAL_PAGE = 0.97, 0.99


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in text if not unicodedata.combining(c))


def words(text: str) -> set[str]:
    """The truth's tokenisation: letter runs; CJK sub-runs of >= 2, others of >= 4 characters."""
    out: set[str] = set()
    for run in _RUN.findall(normalise(text)):
        pos = 0
        for m in _CJK.finditer(run):
            if m.start() - pos >= 4:
                out.add(run[pos : m.start()])
            if m.end() - m.start() >= 2:
                out.add(m.group())
            pos = m.end()
        if len(run) - pos >= 4:
            out.add(run[pos:])
    return out


class Indexed:
    """What the index can match for one document: words, and CJK text without spaces."""

    def __init__(self, texts: list[str]) -> None:
        self.words: set[str] = set()
        for t in texts:
            self.words |= words(t)
        self.squashed = "".join("".join(normalise(t).split()) for t in texts)

    def has(self, word: str) -> bool:
        if word in self.words:
            return True
        return bool(_CJK.fullmatch(word)) and word in self.squashed


def chunk_texts(title: str | None, chunk: Chunk) -> list[str]:
    return [chunk.text, *chunk.heading_path, *([title] if title else [])]


class _TracebackCounter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(record.getMessage())


def run_index(files: Path, model: str, data_dir: Path) -> tuple[Any, dict[str, Any], float]:
    settings = load_settings()
    settings.store.data_dir = data_dir
    settings.embed.model = model
    rt = Stages(settings)
    started = time.perf_counter()
    report = rt.indexer().sync("fidelity", [files])
    seconds = time.perf_counter() - started
    docs: dict[str, Any] = {}
    for doc in rt.store.iter_documents("fidelity"):
        docs[doc.path] = (doc, rt.store.document_chunks(doc.id))
    rt.close()
    return report, docs, seconds


def score(truth: list[dict[str, Any]], report: Any, docs: dict[str, Any]) -> dict[str, Any]:
    skipped = {s.path: s.reason for s in report.skipped}
    by_format: dict[str, list[tuple[str, float]]] = defaultdict(list)
    parts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    pages: list[float] = []
    precision: list[float] = []
    expected: list[tuple[str, str, str]] = []  # (path, note, what happened)
    unexplained: list[tuple[str, str]] = []
    low: list[tuple[str, float, list[str]]] = []
    for t in truth:
        rel = t["path"].removeprefix("files/")
        doc, chunks = docs.get(rel, (None, []))
        if t.get("note"):
            what = skipped.get(rel) or (f"indexed, {len(chunks)} chunks" if doc else "not indexed")
            expected.append((rel, t["note"], what))
            continue
        if doc is None or not chunks:
            unexplained.append((rel, skipped.get(rel) or "indexed with 0 chunks"))
        texts = [x for c in chunks for x in chunk_texts(doc.title if doc else None, c)]
        index = Indexed(texts)
        if t["format"] == "pdf":
            truth_words = {w for p in t.get("pages", []) for w in p["words"]}
            grouped: dict[int, list[str]] = defaultdict(list)
            for c in chunks:
                grouped[c.page or 0].extend(chunk_texts(doc.title, c))
            by_page = {p: Indexed(ts) for p, ts in grouped.items()}
            for p in t.get("pages", []):
                found = [w for w in p["words"] if index.has(w)]
                if found:
                    here = by_page.get(p["page"])
                    pages.append(sum(1 for w in found if here and here.has(w)) / len(found))
            page_sets = {p["page"]: set(p["words"]) for p in t.get("pages", [])}
            for number, here in by_page.items():
                truth_here = page_sets.get(number)
                if truth_here is None or len(truth_here) >= 300:
                    continue
                cited = [w for w in truth_words if here.has(w)]
                if cited:
                    precision.append(sum(1 for w in cited if w in truth_here) / len(cited))
        else:
            truth_words = set(t.get("words", []))
        if not truth_words:
            continue
        missing = sorted(w for w in truth_words if not index.has(w))
        recall = 1 - len(missing) / len(truth_words) if chunks else 0.0
        by_format[t["format"]].append((rel, recall))
        if recall < GOAL_RECALL:
            low.append((rel, recall, missing[:12]))
        for name, part_words in t.get("parts", {}).items():
            parts[name][1] += len(part_words)
            parts[name][0] += sum(1 for w in part_words if chunks and index.has(w))
    return {
        "formats": {f: sum(r for _, r in v) / len(v) for f, v in sorted(by_format.items())},
        "format_files": {f: len(v) for f, v in by_format.items()},
        "parts": {p: (found / total if total else 1.0, total) for p, (found, total) in sorted(parts.items())},
        "page_accuracy": sum(pages) / len(pages) if pages else 1.0,
        "pages_scored": len(pages),
        "citation_precision": sum(precision) / len(precision) if precision else 1.0,
        "expected_unreadable": expected,
        "unexplained": unexplained,
        "low": sorted(low, key=lambda x: x[1]),
    }


def compare_pdf_libraries(truth: list[dict[str, Any]], files: Path) -> str:
    """Each PDF library alone (as docshelf calls it, before any fallback) against the truth:
    mean word recall over PDFs, page accuracy, seconds. How PDFium was chosen (issue 16)."""
    from docshelf.parse.limits import ParseLimits
    from docshelf.parse.pdf_pdfium import read_pdfium
    from docshelf.parse.pdf_pypdf import read_pypdf

    rows = [
        "| library | PDFs read | mean word recall | page accuracy | seconds |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, read in (("pypdfium2 (PDFium)", read_pdfium), ("pypdf", read_pypdf)):
        recalls: list[float] = []
        pages: list[float] = []
        failed = 0
        started = time.perf_counter()
        for t in truth:
            if t["format"] != "pdf" or t.get("note") or not t.get("pages"):
                continue
            path = files / t["path"].removeprefix("files/")
            try:
                with warnings.catch_warnings():  # PDFium's "no XFA support" note, as in indexing
                    warnings.simplefilter("ignore")
                    texts = read(path.read_bytes(), str(path), 5000, ParseLimits().deadline(str(path))).pages
            except Exception:
                texts, failed = [], failed + 1
            everywhere = Indexed(texts)
            truth_words = {w for p in t["pages"] for w in p["words"]}
            recalls.append(sum(everywhere.has(w) for w in truth_words) / len(truth_words))
            for p in t["pages"]:
                found = [w for w in p["words"] if everywhere.has(w)]
                if found:
                    here = Indexed([texts[p["page"] - 1]] if p["page"] <= len(texts) else [])
                    pages.append(sum(here.has(w) for w in found) / len(found))
        seconds = time.perf_counter() - started
        recall, accuracy = sum(recalls) / len(recalls), sum(pages) / max(1, len(pages))
        rows.append(
            f"| {name} | {len(recalls) - failed}/{len(recalls)} | {recall:.3f} | {accuracy:.4f} "
            f"| {seconds:.0f} |"
        )
    return "\n".join(rows)


def render(result: dict[str, Any], meta: dict[str, Any]) -> str:
    out = [f"command: `{meta['command']}`", f"machine: {meta['machine']}; load before/after: {meta['load']}",
           f"indexed {meta['files']} files in {meta['seconds']:.0f} s, model {meta['model']}", "",
           "| format | files | word recall | goal |", "|---|---:|---:|---|"]  # fmt: skip
    for fmt, recall in result["formats"].items():
        ok = "ok" if recall >= GOAL_RECALL else "**below**"
        out.append(f"| {fmt} | {result['format_files'][fmt]} | {recall:.3f} | {ok} |")
    ok = "ok" if result["page_accuracy"] >= GOAL_PAGE else "**below**"
    accuracy = f"PDF page accuracy: {result['page_accuracy']:.4f} over {result['pages_scored']} pages ({ok})"
    precision = f"citation precision {result['citation_precision']:.4f}"
    out += ["", f"{accuracy}; {precision}", "", "| part | truth words | recall |", "|---|---:|---:|"]
    for name, (recall, total) in result["parts"].items():
        out.append(f"| {name} | {total} | {recall:.3f} |")
    out += ["", f"files below {GOAL_RECALL} recall: {len(result['low'])}"]
    for rel, recall, missing in result["low"]:
        out.append(f"- {rel}: {recall:.3f} (missing e.g. {', '.join(missing)})")
    out += ["", f"unexplained skipped / zero-chunk files: {len(result['unexplained'])}"]
    out += [f"- {rel}: {why}" for rel, why in result["unexplained"]]
    out += ["", f"expected unreadable (truth has a note): {len(result['expected_unreadable'])}"]
    out += [f"- {rel}: {what}" for rel, _, what in result["expected_unreadable"]]
    out += ["", f"tracebacks while indexing: {len(meta['tracebacks'])}"]
    out += [f"- {msg}" for msg in meta["tracebacks"]]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--realdocs", type=Path, default=ROOT.parent / "shared" / "realdocs")
    parser.add_argument("--model", default="e5", help="embedding model (chunk sizes follow its tokenizer)")
    parser.add_argument("--json", type=Path, help="also write the scores as JSON here")
    parser.add_argument(
        "--pdf-libraries", action="store_true", help="only compare PDFium and pypdf on the PDFs"
    )
    args = parser.parse_args()
    truth = [json.loads(line) for line in (args.realdocs / "truth.jsonl").read_text("utf-8").splitlines()]
    if args.pdf_libraries:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"command: `python {shlex.join(['bench/fidelity.py', *sys.argv[1:]])}`; load {load}\n")
        print(compare_pdf_libraries(truth, args.realdocs / "files"))
        return
    counter = _TracebackCounter()
    logging.getLogger().addHandler(counter)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="docshelf-fidelity-") as tmp:
        report, docs, seconds = run_index((args.realdocs / "files").resolve(), args.model, Path(tmp))
    result = score(truth, report, docs)
    meta = {
        "command": "python " + shlex.join(["bench/fidelity.py", *sys.argv[1:]]),
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "load": f"{' '.join(f'{x:.2f}' for x in load_before)} / "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "files": len(truth),
        "seconds": seconds,
        "model": args.model,
        "tracebacks": counter.records,
    }
    print(render(result, meta))
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, **result}, indent=1, default=str), "utf-8")


if __name__ == "__main__":
    main()
