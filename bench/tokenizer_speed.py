"""The e5 tokenizer's cost per chunk: cold (a fresh word cache, so every word goes through the
Viterbi pass) and warm (every word cached), optionally beside an older checkout's tokenizer.

    python bench/tokenizer_speed.py [--texts 6000] [--rounds 2] [--jsonl FILE ...] [--baseline-src DIR]

Texts: prose paragraphs from the installed Python's files (bench/gen_corpus.py's, the text of its
generated corpus) joined to ~700 characters, about the indexer's chunks there; --jsonl adds the
"text" field of each line of BEIR-layout corpus files (e.g. another language's). Every text is
encoded as a passage, as the indexer does, once cold and once warm. With --baseline-src (the
``src`` folder of another checkout) its tokenizer runs on the same tables and texts, alternated
with this one --rounds times, and the ids of both are compared. Prints the machine and the load.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from gen_corpus import paragraphs  # noqa: E402
from machine import cpu, load  # noqa: E402

from docshelf.embed.e5 import PASSAGE, E5Embedder  # noqa: E402


def texts(count: int, jsonl: list[Path]) -> list[str]:
    out: list[str] = []
    chunk = ""
    for para in paragraphs():
        chunk = f"{chunk}\n\n{para}" if chunk else para
        if len(chunk) >= 700:
            out.append(chunk)
            chunk = ""
        if len(out) >= count:
            break
    for path in jsonl:
        for line in path.read_text(encoding="utf-8").splitlines()[:count]:
            out.append(json.loads(line)["text"])
    return out


def module_from(src: Path, name: str) -> ModuleType:
    """The tokenizer module of the checkout whose ``src`` folder this is, loaded from its file."""
    path = src / "docshelf" / "embed" / "_e5_tokenizer.py"
    spec = importlib.util.spec_from_file_location(f"{name}_e5_tokenizer", path)
    if spec is None or spec.loader is None:
        sys.exit(f"no tokenizer at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kept_tables(src: Path) -> Path:
    """The tokenizer tables the checkout whose ``src`` folder this is keeps, made by its own
    E5Embedder in a scratch cache dir (so each is read back in the format it writes)."""
    cache = Path(tempfile.mkdtemp(prefix="docshelf-tokenizer-"))
    make = "import sys; from docshelf.embed.e5 import E5Embedder as E; E(sys.argv[1]).count_tokens('warm')"
    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run([sys.executable, "-c", make, str(cache)], env=env, check=True)
    kept = sorted(cache.glob("e5-small-q4-*.tokenizer"))
    if not kept:
        sys.exit(f"{src}: the Python tokenizer is not in use here (fallen back to the C engine)")
    return kept[0]


def timed(module: ModuleType, tables: Path, batch: list[str]) -> tuple[float, float, list[list[int]]]:
    """Milliseconds a text, cold (a tokenizer just read back: its word cache empty, and whatever it
    builds on first use) then warm, and the ids."""
    tok = module.UnigramTokenizer.load(tables)
    started = time.perf_counter()
    ids = [tok.encode(PASSAGE + t) for t in batch]
    cold = time.perf_counter() - started
    started = time.perf_counter()
    for t in batch:
        tok.encode(PASSAGE + t)
    warm = time.perf_counter() - started
    return cold * 1e3 / len(batch), warm * 1e3 / len(batch), ids


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jsonl", type=Path, nargs="*", default=[])
    parser.add_argument("--baseline-src", type=Path)
    args = parser.parse_args()
    batch = texts(args.texts, args.jsonl)
    embedder = E5Embedder(Path(tempfile.mkdtemp(prefix="docshelf-tokenizer-")))
    sources = {"this": HERE.parent / "src"}
    if args.baseline_src:
        sources["baseline"] = args.baseline_src
    modules = {name: module_from(src, name) for name, src in sources.items()}
    kept = {name: kept_tables(src) for name, src in sources.items()}  # each in its checkout's format
    for name, module in modules.items():
        if module.UnigramTokenizer.load(kept[name]) is None:
            sys.exit(f"{sources[name]} cannot read the tokenizer tables it kept in {kept[name]}")
    print(f"python {' '.join(sys.argv)}")
    print(f"machine: {cpu()}, Python {platform.python_version()}; {load()}")
    tokens = sum(embedder.count_tokens(t) for t in batch) / len(batch)
    print(f"{len(batch)} texts, {tokens:.0f} tokens each on average")
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in modules}
    ids: dict[str, list[list[int]]] = {}
    for r in range(args.rounds):
        names = list(modules) if r % 2 == 0 else list(reversed(modules))
        for name in names:
            cold, warm, ids[name] = timed(modules[name], kept[name], batch)
            figures[name].append((cold, warm))
            print(f"round {r + 1}, {name}: cold {cold:.3f} ms a text, warm {warm:.3f} ({load()})")
    for name, runs in figures.items():
        cold, warm = (statistics.median(x) for x in zip(*runs, strict=True))
        print(f"{name}: cold {cold:.3f} ms a text, warm {warm:.3f} (medians)")
    if "baseline" in figures:
        bc, bw = (statistics.median(x) for x in zip(*figures["baseline"], strict=True))
        tc, tw = (statistics.median(x) for x in zip(*figures["this"], strict=True))
        same = ids["this"] == ids["baseline"]
        print(f"this / baseline: cold {tc / bc:.3f}, warm {tw / bw:.3f}; ids identical: {same}")


if __name__ == "__main__":
    main()
