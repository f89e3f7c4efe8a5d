"""Run `docshelf eval` on every set in ../shared/eval-data and write docs/benchmarks.md.

    python bench/eval_all.py [--model use] [--sets scifact nfcorpus ...] [--work /tmp/docshelf-eval]

Indexes are kept under --work, so a rerun (e.g. after a fusion change) only
queries. Also runs the cross-lingual checks: English XQuAD questions against the
German and Chinese paragraphs and the other way round (same question ids). Every figure in the written
table comes from this run; nothing is typed by hand.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import time
from pathlib import Path

from docshelf.config import load_settings
from docshelf.search.evaluate import evaluate, load_beir, write_corpus
from docshelf.testing import Stages

ROOT = Path(__file__).resolve().parents[1]
SETS = ["scifact", "nfcorpus", "xquad-en", "xquad-de", "xquad-zh", "cmrc2018-dev"]
# (corpus, questions): English questions over German / Chinese paragraphs, and German / Chinese
# questions over English ones (German shares enough words with English to fool a keyword side)
CROSS = [
    ("xquad-de", "xquad-en"), ("xquad-zh", "xquad-en"), ("xquad-en", "xquad-de"), ("xquad-en", "xquad-zh"),
]  # fmt: skip


def run_set(
    model: str, folder: Path, work: Path, queries_from: Path | None = None
) -> tuple[list[dict[str, object]], dict[str, float]]:
    data = load_beir(folder, "test", queries_from / "queries.jsonl" if queries_from else None)
    settings = load_settings()
    settings.store.data_dir = work / f"{model}-{folder.name}" / "index"
    settings.embed.model = model
    rt = Stages(settings)
    try:
        names = write_corpus(data, work / f"{model}-{folder.name}" / "corpus")
        t0 = time.perf_counter()
        report = rt.indexer().sync("eval", [work / f"{model}-{folder.name}" / "corpus"])
        index_s = time.perf_counter() - t0
        scores = evaluate(rt.searcher(), data, names, "eval")
        chunks = rt.store.stats().chunks
        label = folder.name if queries_from is None else f"{queries_from.name} → {folder.name}"
        rows = [{"set": label, "model": rt.embedder.name, **s.__dict__} for s in scores]
        indexed = len(report.added) + len(report.updated)
        info = {"docs": len(data.corpus), "chunks": chunks, "indexed": indexed, "index_s": index_s}
        return rows, info
    finally:
        rt.close()


def table(rows: list[dict[str, object]]) -> str:
    out = ["| set | model | mode | nDCG@10 | recall@100 | MRR@10 | p50 ms | p95 ms |",
           "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        out.append(
            f"| {r['set']} | {r['model']} | {r['mode']} | {r['ndcg10']:.4f} | {r['recall100']:.4f} | "
            f"{r['mrr10']:.4f} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} |"
        )
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", default="use")
    p.add_argument("--sets", nargs="*", default=SETS)
    p.add_argument("--no-cross", action="store_true")
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    p.add_argument("--work", type=Path, default=Path("/tmp/docshelf-eval"))
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = p.parse_args()

    started = time.time()
    rows: list[dict[str, object]] = []
    speed: list[str] = []
    for name in args.sets:
        set_rows, info = run_set(args.model, args.eval_data / name, args.work)
        rows += set_rows
        if info["indexed"]:
            speed.append(f"| {name} | {args.model} | {info['docs']:.0f} | {info['chunks']:.0f} | "
                         f"{info['index_s']:.0f} | {info['chunks'] / info['index_s']:.1f} |")  # fmt: skip
        print(table(set_rows), file=sys.stderr)
    if not args.no_cross:
        for target, source in CROSS:
            if target in args.sets:
                source_dir = args.eval_data / source
                cross_rows, _ = run_set(args.model, args.eval_data / target, args.work, source_dir)
                rows += cross_rows
    section = [
        f"<!-- eval:{args.model} -->",
        f"### `{args.model}`: {time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, "
        f"{runtime_note()}; run took {(time.time() - started) / 60:.0f} min",
        "",
        f"Command: `python bench/eval_all.py --model {args.model}` (test splits; latency includes the "
        "query embedding, search.candidates chunks (200) fetched per query, no snippets)",
        "",
        table(rows),
    ]
    header = ["", "| set | model | docs | chunks | index s | chunks/s |", "|---|---|---|---|---|---|"]
    if speed:
        section += [*header, *speed]
    else:  # nothing was indexed this time: keep the figures of the run that did index
        section += [*header, *previous_speed(args.out, args.model)]
    section.append(f"<!-- /eval:{args.model} -->")
    write_section(args.out, args.model, "\n".join(section))
    print(json.dumps(rows, indent=1), file=sys.stderr)


def runtime_note() -> str:
    import os

    return f"{os.cpu_count()} cores, embed threads {load_settings().embed.threads}"


def previous_speed(path: Path, model: str) -> list[str]:
    """The indexing-speed rows of the section this run replaces."""
    if not path.exists():
        return []
    doc = path.read_text(encoding="utf-8")
    match = re.search(rf"<!-- eval:{re.escape(model)} -->(.*?)<!-- /eval:{re.escape(model)} -->", doc, re.S)
    if match is None:
        return []
    return [line for line in match.group(1).splitlines() if re.match(r"\| \S+ \| \S+ \| \d+ \|", line)]


def write_section(path: Path, model: str, text: str) -> None:
    doc = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"<!-- eval:{re.escape(model)} -->.*?<!-- /eval:{re.escape(model)} -->", re.S)
    doc = pattern.sub(lambda _: text, doc) if pattern.search(doc) else doc.rstrip() + "\n\n" + text + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    main()
