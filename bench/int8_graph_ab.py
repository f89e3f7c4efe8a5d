"""e5's int8 onnxruntime graph as this checkout builds it against another checkout's, on both cores.

    python bench/int8_graph_ab.py --baseline-src OTHER/src [--texts 300] [--rounds 4]
                                  [--eval-data ../shared/eval-data] [--work DIR]

Each checkout builds its graphs (float32 and int8) into a model cache of its own and runs them in
processes of its own (PYTHONPATH): the same texts (chunk-sized passages from bench/gen_corpus.py's
pool, and with --eval-data 40 passages of each set there) fed to its int8 graph as the indexer
feeds them (``E5Embedder.onnx_feeds`` / ``run_feed``: one text a run, embed.workers threads, 2),
the two alternated --rounds times: texts/s of each, the ratio of the medians, and each one's
vectors' cosine to this checkout's float32 graph (min, 1st percentile, mean). Prints the command,
the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from machine import cpu, load

HERE = Path(__file__).resolve().parent


def side(cache: Path, texts_file: Path, vectors: Path | None) -> dict[str, float]:
    """In a child process: this checkout's int8 graph (built in ``cache`` on first use) timed on
    the texts; their vectors saved to ``vectors`` when given."""
    from docshelf.embed.e5 import E5Embedder

    embedder = E5Embedder(cache, threads=1, workers=2)
    embedder.warm()
    texts = json.loads(texts_file.read_text(encoding="utf-8"))
    if vectors is not None:
        np.save(vectors, embedder.embed_documents(texts))
    feeds = embedder.onnx_feeds(texts)
    with ThreadPoolExecutor(embedder.workers) as pool:
        started = time.perf_counter()
        list(pool.map(embedder.run_feed, feeds))
        seconds = time.perf_counter() - started
    return {"rate": len(texts) / seconds, "int8": float(embedder.int8)}


def texts(count: int, eval_data: Path | None) -> list[str]:
    sys.path.insert(0, str(HERE))
    from gen_corpus import paragraphs

    out: list[str] = []
    if eval_data is not None:
        for corpus in sorted(eval_data.glob("*/corpus.jsonl")):
            rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line]
            random.Random(5).shuffle(rows)
            out += [f"{r.get('title', '')}\n{r['text']}"[:1200] for r in rows[:40]]
    pool, rng = list(paragraphs()), random.Random(3)
    while len(out) < count:
        text = ""
        while len(text) < 900:
            text += rng.choice(pool) + "\n\n"
        out.append(text[:1000])
    return out


def run_side(src: Path | None, cache: Path, texts_file: Path, vectors: Path | None) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--side",
        str(cache),
        "--texts-file",
        str(texts_file),
    ]
    if vectors is not None:
        cmd += ["--vectors", str(vectors)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        sys.exit(f"the {src or 'this checkout'} side failed: {proc.stderr[-2000:]}")
    result: dict[str, float] = json.loads(proc.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--baseline-src", type=Path)
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--eval-data", type=Path)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--side", type=Path, help=argparse.SUPPRESS)  # the child process
    parser.add_argument("--texts-file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--vectors", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        print(json.dumps(side(args.side, args.texts_file, args.vectors)))
        return
    if args.baseline_src is None:
        parser.error("--baseline-src is required")
    print("command: python " + " ".join(sys.argv))
    print(f"machine: {cpu()}, {os.cpu_count()} cores, Python {platform.python_version()}; {load()}")
    work = args.work or Path(tempfile.mkdtemp(prefix="docshelf-int8-"))
    work.mkdir(parents=True, exist_ok=True)
    chosen = texts(args.texts, args.eval_data)
    texts_file = work / "texts.json"
    texts_file.write_text(json.dumps(chosen), encoding="utf-8")
    sides = {"baseline": args.baseline_src, "this": None}
    for name, src in sides.items():  # builds each cache and saves each one's vectors (not timed)
        done = run_side(src, work / name, texts_file, work / f"{name}.npy")
        if not done["int8"]:
            sys.exit(f"{name}'s int8 graph was rejected by its accuracy check: nothing to compare")
    print(f"{len(chosen)} texts of {sum(map(len, chosen)) / len(chosen):.0f} characters on average; {load()}")
    rates: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(args.rounds):
        for name in list(sides) if r % 2 == 0 else list(reversed(sides)):
            rates[name].append(run_side(sides[name], work / name, texts_file, None)["rate"])
        shown = ", ".join(f"{n} {rates[n][-1]:.1f} texts/s" for n in sides)
        print(f"round {r + 1}: {shown}; {load()}")

    from docshelf.embed.e5 import E5Embedder

    reference = E5Embedder(work / "this", threads=1, backend="onnx-fp32").embed_documents(chosen)
    for name in sides:
        cos = np.sum(reference * np.load(work / f"{name}.npy"), axis=1)
        print(
            f"{name}: median {statistics.median(rates[name]):.2f} texts/s; cosine to float32 min "
            f"{cos.min():.4f}, 1st percentile {np.percentile(cos, 1):.4f}, mean {cos.mean():.4f}"
        )
    ratio = statistics.median(rates["this"]) / statistics.median(rates["baseline"])
    print(f"this / baseline texts/s: {ratio:.3f}; {load()}")


if __name__ == "__main__":
    main()
