"""Live index: edit-to-searchable latency, search latency while another process indexes, soak.

    python bench/live_bench.py [--model e5] [--edits 20] [--files-per-edit 1] [--abstracts 500]
        [--searches 2000] [--edits-only] [--door python|cli]

1. Edit-to-searchable: an in-process Watcher (default watch settings: debounce 500 ms) over a
   corpus of 50 scifact abstracts; each of --edits edits adds a unique word to --files-per-edit
   files at once (a save-all, a checkout), timed until a separate reader finds it in all of them
   (keyword search). Target p50/p95 <= 2 s with the default model. --door cli: the edits are
   watched by `docshelf watch` as a process instead. --edits-only stops here.
2. Search latency (hybrid, query embedding included) on that index, idle and while a second
   process runs `docshelf index` over --abstracts scifact abstracts into the same store.
3. The soak of tests/test_soak.py with --searches searches (2 servers, 1 watcher, hash model).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from machine import cpu, load

from docshelf.config import Settings, load_settings
from docshelf.index.watch import Watcher
from docshelf.search.evaluate import percentile
from docshelf.testing import Stages

ROOT = Path(__file__).resolve().parents[1]
QUERIES = [
    "stem cell malignancies", "white matter diffusion imaging", "reverse transcription RNA",
    "vitamin D and bone density", "antibiotic resistance in bacteria", "insulin signalling obesity",
]  # fmt: skip


def _settings(data: Path, model: str) -> Settings:
    s = load_settings(collection="bench")
    s.store.data_dir = data
    s.embed.model = model
    return s


def _write_abstracts(src: Path, folder: Path, start: int, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with src.open() as f:
        for i, line in enumerate(f):
            if i < start:
                continue
            if i >= start + count:
                break
            row = json.loads(line)
            (folder / f"{row['_id']}.md").write_text(f"# {row['title']}\n\n{row['text']}\n")


def _cli_env(model: str) -> dict[str, str]:
    """The environment of a `docshelf` process of this bench: none of the caller's settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env["DOCSHELF_EMBED__MODEL"] = model
    return env


def _ms(values: list[float]) -> str:
    p50, p95 = percentile(values, 0.5) * 1000, percentile(values, 0.95) * 1000
    return f"p50 {p50:.0f} ms, p95 {p95:.0f} ms (n={len(values)})"


class _WatchCommand:
    """`docshelf watch` as a process (the CLI door), in place of the in-process Watcher."""

    def __init__(self, corpus: Path, data: Path, model: str) -> None:
        env = _cli_env(model)
        cmd = [sys.executable, "-m", "docshelf", "watch", str(corpus), "-c", "bench", "--data-dir", str(data)]
        self.proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        assert self.proc.stderr is not None
        for line in self.proc.stderr:  # its first sync runs before it says so
            if line.startswith("watching "):
                break
        else:
            raise SystemExit(f"docshelf watch ended: exit {self.proc.wait()}")
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def edit_latency(
    work: Path, model: str, edits: int, per_edit: int = 1, door: str = "python"
) -> tuple[list[float], Stages]:
    corpus = work / "live"
    watcher: Watcher | _WatchCommand
    if door == "cli":
        writer = None
        watcher = _WatchCommand(corpus, work / "data", model)
    else:
        writer = Stages(_settings(work / "data", model))
        writer.indexer().sync("bench", [corpus])
        watcher = Watcher(writer.indexer(), "bench", writer.settings.watch, [corpus])
        watcher.start()
    reader = Stages(_settings(work / "data", model))
    searcher = reader.searcher()
    took: list[float] = []
    try:
        while isinstance(watcher, Watcher) and watcher.health["state"] != "running":
            time.sleep(0.05)
        files = sorted(corpus.glob("*.md"))
        for i in range(edits):
            word = "zqx" + "".join(chr(ord("a") + int(d)) for d in f"{i:03d}{os.getpid()}") + "marker"
            targets = [files[(i * per_edit + j) % len(files)] for j in range(per_edit)]  # < 50: distinct
            started = time.monotonic()
            for target in targets:
                target.write_text(target.read_text() + f"\nRevision note {word}.\n")
            while (
                len({h.path for h in searcher.search(word, k=per_edit + 2, mode="keyword").hits}) < per_edit
            ):
                if time.monotonic() - started > 30:
                    raise SystemExit(f"edit {i} not searchable within 30 s")
                time.sleep(0.01)
            took.append(time.monotonic() - started)
            time.sleep(0.2)
    finally:
        watcher.stop()
        if writer is not None:
            writer.close()
    return took, reader


def search_latency(reader: Stages, seconds: float, stop: threading.Event | None = None) -> list[float]:
    searcher = reader.searcher()
    out: list[float] = []
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end and not (stop is not None and stop.is_set()):
        started = time.perf_counter()
        searcher.search(QUERIES[i % len(QUERIES)], k=10, mode="hybrid")
        out.append(time.perf_counter() - started)
        i += 1
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", default="e5")
    p.add_argument("--edits", type=int, default=20)
    p.add_argument("--files-per-edit", type=int, default=1)
    p.add_argument("--edits-only", action="store_true")
    p.add_argument(
        "--door", choices=["python", "cli"], default="python", help="cli: `docshelf watch` as a process"
    )
    p.add_argument("--abstracts", type=int, default=500)
    p.add_argument("--searches", type=int, default=2000)
    p.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    args = p.parse_args()
    src = args.eval_data / "scifact" / "corpus.jsonl"
    with tempfile.TemporaryDirectory(prefix="docshelf-live-") as tmp:
        work = Path(tmp)
        _write_abstracts(src, work / "live", 0, 50)
        _write_abstracts(src, work / "bulk", 50, args.abstracts)

        print(f"python {' '.join(sys.argv)}  ({cpu()}, {os.cpu_count()} CPUs, {load()})")
        took, reader = edit_latency(work, args.model, args.edits, args.files_per_edit, args.door)
        debounce = reader.settings.watch.debounce_ms
        print(
            f"edit-to-searchable ({args.model}, debounce {debounce} ms, {args.files_per_edit} files "
            f"an edit, {args.door} door): {_ms(took)}  ({load()})"
        )
        if args.edits_only:
            reader.close()
            return

        search_latency(reader, 1.0)  # warm up
        idle = search_latency(reader, 5.0)
        print(f"hybrid search, idle: {_ms(idle)}")
        env = _cli_env(args.model)
        cmd = [sys.executable, "-m", "docshelf", "index", str(work / "bulk"), "--collection", "bulk",
               "--data-dir", str(work / "data")]  # fmt: skip
        started = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        done = threading.Event()
        threading.Thread(target=lambda: (proc.wait(), done.set()), daemon=True).start()
        busy = search_latency(reader, 600.0, done)
        proc.wait()
        print(
            f"hybrid search while another process indexes {args.abstracts} abstracts "
            f"({time.monotonic() - started:.0f} s, exit {proc.returncode}): {_ms(busy)}"
        )
        reader.close()

        sys.path.insert(0, str(ROOT / "tests"))
        from test_soak import run_soak

        started = time.monotonic()
        stats = run_soak(work / "soak", args.searches)
        print(
            f"soak ({time.monotonic() - started:.0f}s): {stats['searches']} searches (2 servers, 1 watcher), "
            f"{len(stats['errors'])} errors, {stats['resolved']} hits read back, {stats['gone']} gone "
            f"(clean isError), churn {stats['ops']}, search {_ms(stats['latencies'])}, "
            f"converged with a fresh index: {stats['converged']} ({stats['live_docs']} documents)"
        )
        for error in stats["errors"][:5]:
            print("  error:", error)


if __name__ == "__main__":
    main()
