"""Keyword first, vectors after, on a large corpus, through the real CLI: how soon every file is
keyword-searchable, how long until every chunk has its vector, and today's full index beside it.

    python bench/keyword_first_bench.py [--files 20000] [--work DIR] [--baseline-src DIR] [--keep]

The corpus is bench/gen_corpus.py's (20,000 files: some 150,000 chunks; --corpus for your own).
`docshelf index CORPUS --json` runs once with e5 (embed.workers = 2: both cores); from its report and
its wall time:

- keyword-searchable: the process's wall time minus its embedding phase (the first phase ends when
  the last new file is swapped in and published), checked afterwards by keyword searches for the
  marker of every 50th file through the CLI;
- full hybrid: the process's wall time;
- the ratio keyword / full (target <= 0.2).

With --baseline-src (the ``src`` folder of a checkout from before keyword-first, e.g.
``git worktree add /tmp/old 3888ab9`` then ``/tmp/old/src``), that docshelf indexes the same corpus
into another folder before each run (its full index: the "today" figure), and the ratio full /
today is printed, of wall and of CPU time (target <= 1.0). --rounds alternates the two that many
times (medians). Every figure comes with the machine and the load before and after.
A full run at the default size takes about an hour per index on two quiet cores. Each checkout has
a model cache of its own under the work folder (the e5 graph its own code builds), made ready before
anything is timed.

--interleave SECONDS runs the two indexes as one run in turns instead: both processes start, and
SIGSTOP / SIGCONT hand the machine to each in turn for SECONDS at a time, so a change in the
machine's speed during the hours of a run falls on both alike; each one's time is the sum of its
turns (and its keyword time the sum of its turns until its first phase ended). While the file
given to --hold exists, both are stopped and the clock of neither runs (other work on the machine
can go there). Each turn is logged as it ends. After each turn, and when the bench is stopped
(SIGTERM, SIGHUP, Ctrl-C), each one's seconds and CPU so far go to WORK/turns.json; --resume then
starts both again on their indexes as they stand (the stop lost at most a batch of each) and adds
the new turns to those (a half's keyword time is the saved "keyword" when its first phase ended
before the stop; else the turns before it count in full, an upper bound).

--keyword-only times the first phase alone (`index --keyword-only`) of this checkout against
--baseline-src, which must be a keyword-first checkout too (e.g. 7120fbd), --rounds times
alternated: the ratio of the medians, of wall and of CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine import cpu, load

HERE = Path(__file__).resolve().parent


def index(corpus: Path, data: Path, env: dict[str, str], *more: str) -> tuple[dict[str, Any], float, float]:
    """`docshelf index CORPUS --json` into a fresh ``data``: its report, wall and CPU seconds."""
    shutil.rmtree(data, ignore_errors=True)
    cmd = [sys.executable, "-m", "docshelf", "index", str(corpus), "--json", "--data-dir", str(data), *more]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        sys.exit(f"index failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(proc.stdout), wall, cpu_s


def cached(env: dict[str, str], cache: Path) -> dict[str, str]:
    """``env`` with a model cache of its own, made ready before anything is timed: each checkout
    runs the e5 graph its own code builds (another checkout's cached graph may differ), and the
    unpacking and the graph's build are not part of an index's time."""
    env = {**env, "DOCSHELF_EMBED__CACHE_DIR": str(cache)}
    warm = cache.parent / f"warm-{cache.name}"
    (warm / "docs").mkdir(parents=True, exist_ok=True)
    (warm / "docs" / "one.md").write_text("# Warm\n\nThe model is made ready here.\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "docshelf", "index", str(warm / "docs"), "--data-dir", str(warm / "data")]
    subprocess.run(cmd, env=env, capture_output=True, check=True)
    return env


class Stopped(Exception):
    """The bench itself was told to stop (SIGTERM, SIGHUP): save the turns and leave."""


def stop(signum: int, frame: object) -> None:
    raise Stopped(signal.Signals(signum).name)


def group_cpu(pgid: int) -> float:
    """CPU seconds of a process group so far: its live members and the children they reaped."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # it ended meanwhile
        if int(fields[2]) == pgid:  # utime, stime, cutime, cstime
            ticks += sum(int(f) for f in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


class Turns:
    """One `docshelf index` process run in turns: started stopped, its running spans recorded."""

    def __init__(
        self, name: str, corpus: Path, data: Path, env: dict[str, str], logs: Path, prior: dict[str, Any]
    ) -> None:
        if not prior:  # a resumed half goes on from its index as it stands
            shutil.rmtree(data, ignore_errors=True)
        self.prior = {"seconds": 0.0, "cpu": 0.0, "keyword": None, **prior}
        self.name, self.env = name, env
        self.cmd = [sys.executable, "-m", "docshelf", "index", str(corpus), "--json", "--data-dir", str(data)]
        self.out, self.err = logs / f"{name}.out", logs / f"{name}.err"
        self.proc: subprocess.Popen[bytes] | None = None
        self.spans: list[list[float]] = []
        self.code: int | None = None
        self.cpu = 0.0
        self.report: dict[str, Any] = {}

    def resume(self) -> None:
        self.spans.append([time.perf_counter(), 0.0])
        if self.proc is None:  # its own process group: SIGSTOP reaches its workers too
            with self.out.open("wb") as out, self.err.open("wb") as err:
                self.proc = subprocess.Popen(self.cmd, env=self.env, stdout=out, stderr=err,
                                             start_new_session=True)  # fmt: skip
        else:
            os.killpg(self.proc.pid, signal.SIGCONT)

    def pause(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGSTOP)
        self.spans[-1][1] = time.perf_counter()
        self.cpu = group_cpu(self.proc.pid)

    def saved(self) -> dict[str, Any]:
        """What a resumed run starts from: seconds and CPU of all its turns so far."""
        return {**self.prior, "seconds": self.total(), "cpu": self.prior["cpu"] + self.cpu}

    def total(self, until: float = float("inf")) -> float:
        return float(self.prior["seconds"]) + self.active(until)

    def ended(self) -> bool:
        if self.proc is None:
            return False
        pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
        if pid == 0:
            return False
        self.spans[-1][1] = time.perf_counter()
        self.code = self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.cpu = usage.ru_utime + usage.ru_stime
        if self.code == 0:
            self.report = json.loads(self.out.read_text())
        return True

    def active(self, until: float = float("inf")) -> float:
        """Seconds it ran (up to the instant ``until``)."""
        return sum(max(0.0, min(end, until) - start) for start, end in self.spans)


def interleave(halves: list[Turns], turn_s: float, hold: Path | None, state: Path) -> None:
    """Run ``halves`` in turns of ``turn_s`` seconds until all have ended (none while ``hold`` exists)."""
    try:
        turns(halves, turn_s, hold, state)
    except (Stopped, KeyboardInterrupt) as why:
        for half in halves:
            if half.proc is not None and half.proc.returncode is None:
                if half.spans and half.spans[-1][1] == 0.0:
                    half.pause()
                os.killpg(half.proc.pid, signal.SIGKILL)  # what it had not committed is lost either way
        save(halves, state)
        sys.exit(f"stopped ({why or 'interrupt'}) at {time.strftime('%H:%M:%S')}: the turns so far are in "
                 f"{state}; the same command with --resume goes on")  # fmt: skip
    for half in halves:
        if half.code:
            sys.exit(f"{half.name} index failed ({half.code}): {half.err.read_text()[-2000:]}")


def save(halves: list[Turns], state: Path) -> None:
    state.write_text(json.dumps({half.name: half.saved() for half in halves}, indent=1))


def turns(halves: list[Turns], turn_s: float, hold: Path | None, state: Path) -> None:
    live, turn, current, since, left = list(halves), 0, None, 0.0, turn_s
    while live:
        now = time.perf_counter()
        if current is not None and current.ended():
            print(f"  {time.strftime('%H:%M:%S')} {current.name} ended ({current.code}) after "
                  f"{current.total():.1f}s of turns; {load()}", flush=True)  # fmt: skip
            live.remove(current)
            current = None
        held = hold is not None and hold.exists()
        if current is not None and (held or (len(live) > 1 and now - since >= turn_s)):
            current.pause()
            left = turn_s - (now - since) if held else turn_s  # a hold does not restart the turn
            print(f"  {time.strftime('%H:%M:%S')} {current.name} paused{' (hold)' if held else ''}: "
                  f"{current.total():.1f}s so far; {load()}", flush=True)  # fmt: skip
            save(halves, state)
            turn += 0 if held else 1
            current = None
        if current is None and live and not held:
            current = live[turn % len(live)]
            current.resume()
            since = now - (turn_s - left)
        time.sleep(0.5)


def keyword_only(corpus: Path, work: Path, env: dict[str, str], baseline: Path, rounds: int) -> None:
    """The first phase alone (`index --keyword-only`): this checkout against ``baseline`` (the src
    of a keyword-first checkout), alternated ``rounds`` times, ratio of the medians."""
    runs: dict[str, list[tuple[float, float]]] = {"baseline": [], "this": []}
    for r in range(1, rounds + 1):
        for name, e in (("baseline", {**env, "PYTHONPATH": str(baseline)}), ("this", env)):
            before = load()
            report, wall, cpu_s = index(corpus, work / name, e, "--keyword-only")
            runs[name].append((wall, cpu_s))
            print(f"round {r}, {name}: {report['added']} files, {report['chunks_written']} chunks "
                  f"keyword-searchable after {wall:.1f}s, CPU {cpu_s:.0f}s ({before} -> {load()})",
                  flush=True)  # fmt: skip
    (old_wall, old_cpu), (wall, cpu_s) = (
        (statistics.median(w for w, _ in runs[n]), statistics.median(c for _, c in runs[n])) for n in runs
    )
    print(f"keyword-only, this / baseline: wall {wall / old_wall:.3f}, CPU {cpu_s / old_cpu:.3f} (medians)")
    for name in runs:
        shutil.rmtree(work / name, ignore_errors=True)


def found(marker: str, data: Path, env: dict[str, str]) -> bool:
    cmd = [sys.executable, "-m", "docshelf", "search", marker, "--mode", "keyword", "--json", "-k", "1",
           "--no-helper", "--data-dir", str(data)]  # fmt: skip
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    hits = json.loads(proc.stdout)["hits"] if proc.returncode == 0 else []
    return bool(hits) and marker[2:] in hits[0]["path"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--baseline-src", type=Path, help="src folder of an older docshelf checkout")
    parser.add_argument("--rounds", type=int, default=1, help="alternated runs of each (medians)")
    parser.add_argument("--keep", action="store_true", help="keep the indexes")
    parser.add_argument(
        "--interleave",
        type=float,
        metavar="SECONDS",
        help="one run: both indexes in turns of SECONDS (needs --baseline-src)",
    )
    parser.add_argument("--hold", type=Path, help="while this file exists, neither index runs")
    parser.add_argument("--resume", action="store_true", help="go on from WORK/turns.json (--interleave)")
    parser.add_argument(
        "--keyword-only",
        action="store_true",
        help="the first phase alone, against a keyword-first --baseline-src",
    )
    args = parser.parse_args()
    if args.keyword_only and not args.baseline_src:
        parser.error("--keyword-only needs --baseline-src")
    if args.interleave and not args.baseline_src:
        parser.error("--interleave needs --baseline-src")
    if args.resume and not (args.interleave and args.work):
        parser.error("--resume needs --interleave and the --work of the stopped run")
    work = args.work or Path(tempfile.mkdtemp(prefix="docshelf-kwfirst-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(DOCSHELF_EMBED__MODEL="e5", DOCSHELF_EMBED__WORKERS="2", XDG_DATA_HOME=str(work / "xdg"))
    env = cached(env, work / "cache-new")
    corpus = args.corpus or work / "corpus"
    if args.corpus is None and not corpus.exists():
        sys.path.insert(0, str(HERE))
        from gen_corpus import generate

        generate(corpus, args.files)
    files = sum(1 for _ in corpus.rglob("*.md"))
    print(
        f"machine: {cpu()}, {os.cpu_count()} cores, Python {platform.python_version()}; corpus {files} files"
    )
    if args.keyword_only:
        keyword_only(corpus, work, env, args.baseline_src, args.rounds)
        return
    todays: list[tuple[float, float]] = []
    news: list[tuple[float, float, float]] = []
    if args.interleave:
        work.mkdir(parents=True, exist_ok=True)
        old = cached({**env, "PYTHONPATH": str(args.baseline_src)}, work / "cache-today")
        state = work / "turns.json"
        prior = json.loads(state.read_text()) if args.resume else {}
        halves = [
            Turns(name, corpus, work / name, e, work, prior.get(name, {}))
            for name, e in (("today", old), ("new", env))
        ]
        for name, saved in prior.items():
            print(f"resumed: {name} had {saved['seconds']:.1f}s of turns, CPU {saved['cpu']:.0f}s")
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGHUP, stop)
        before = load()
        print(f"in turns of {args.interleave:.0f}s from {time.strftime('%H:%M:%S')}; {before}", flush=True)
        interleave(halves, args.interleave, args.hold, state)
        today_half, new_half = halves
        report = new_half.report
        end = new_half.spans[-1][1]
        keyword = new_half.prior["keyword"]
        if keyword is None:  # its first phase ended in this run's turns
            keyword = new_half.total(end - (report["seconds"] - report["keyword_seconds"]))
        todays.append((today_half.total(), today_half.saved()["cpu"]))
        news.append((keyword, new_half.total(), new_half.saved()["cpu"]))
        old_report = today_half.report
        print(f"today's index ({args.baseline_src}): {old_report['added']} files, "
              f"{old_report['chunks_written']} chunks this run, {todays[0][0]:.1f}s of turns, "
              f"CPU {todays[0][1]:.0f}s")  # fmt: skip
        print(f"keyword first: {report['added']} files, {report['chunks_written']} chunks this run; every "
              f"file keyword-searchable after {keyword:.1f}s, every chunk with its vector after "
              f"{news[0][1]:.1f}s of turns, CPU {news[0][2]:.0f}s ({before} -> {load()})")  # fmt: skip
    rounds = 0 if args.interleave else args.rounds
    for r in range(1, rounds + 1):  # alternated: a change in the machine's load hits both
        if args.baseline_src:
            old = cached({**env, "PYTHONPATH": str(args.baseline_src)}, work / "cache-today")
            before = load()
            report, wall, cpu_s = index(corpus, work / "today", old)
            todays.append((wall, cpu_s))
            print(f"round {r}, today's index ({args.baseline_src}): {report['added']} files, "
                  f"{report['chunks_written']} chunks, {wall:.1f}s, CPU {cpu_s:.0f}s "
                  f"({before} -> {load()})")  # fmt: skip
        before = load()
        report, wall, cpu_s = index(corpus, work / "new", env)
        keyword = wall - (report["seconds"] - report["keyword_seconds"])
        news.append((keyword, wall, cpu_s))
        print(f"round {r}, keyword first: {report['added']} files, {report['chunks_written']} chunks; every "
              f"file keyword-searchable after {keyword:.1f}s, every chunk with its vector after {wall:.1f}s, "
              f"CPU {cpu_s:.0f}s ({report['chunks_embedded']} texts embedded in "
              f"{report['embed_seconds']:.1f}s; {before} -> {load()})")  # fmt: skip
    keyword, wall, cpu_s = (statistics.median(x) for x in zip(*news, strict=True))
    print(f"keyword-searchable / full hybrid: {keyword / wall:.3f} (target <= 0.2)")
    if todays:
        today, today_cpu = (statistics.median(x) for x in zip(*todays, strict=True))
        print(f"full hybrid / today's full index: wall {wall / today:.3f}, CPU {cpu_s / today_cpu:.3f} "
              "(target <= 1.0; medians)")  # fmt: skip
    sys.path.insert(0, str(HERE))
    from gen_corpus import marker

    generated = (corpus / "part0000" / "doc000000.md").is_file()  # gen_corpus's: a marker a file
    sample = range(0, files, 50) if generated else []
    missing = [n for n in sample if not found(marker(n), work / "new", env)]
    if sample:
        print(f"keyword check: {len(sample) - len(missing)} of {len(sample)} sampled files found by marker")
    if not args.keep:
        for name in ("today", "new"):
            shutil.rmtree(work / name, ignore_errors=True)


if __name__ == "__main__":
    main()
