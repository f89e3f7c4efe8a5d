"""The long reliability run: SIGKILL trials, the hostile corpus at full size, traversal probes,
the ANN index after random edits, re-embeds killed part-way, and the writer lock under stress.

    python bench/reliability_bench.py [--trials 120] [--docs 60] [--bomb-mb 16] [--seed 1]
        [--ann-sequences 300] [--reembed-trials 40] [--lock-rounds 2000] [--only ann,reembed,lock]

Prints trials / corrupt / lost / crashes / escapes / stale / overlaps (all bad counts must be 0;
exit 1 otherwise), plus how many kills landed mid-sync and the peak RSS of indexing the hostile
corpus. The short version of each part runs in `pytest tests/reliability`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "reliability"))

from accesskit import probe_all
from annkit import LAST, AnnRig
from crashkit import CrashRig, cli_env
from hostile import index_hostile, make_hostile_corpus, printable
from lockkit import stress
from reembedkit import calibrate_reembed, reembed_trial

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "corpus"
PARTS = ("crash", "hostile", "access", "ann", "reembed", "lock", "bomb")


def crash_trials(work: Path, trials: int, docs: int, seed: int) -> dict[str, int]:
    rig = CrashRig(work, docs=docs, seed=seed)
    rig.prepare()
    rig.calibrate()
    print(f"crash: {docs} files, start-up {rig.start_s:.2f}s, sync {rig.sync_s:.2f}s; {trials} trials")
    tally = dict.fromkeys(("trials", "corrupt", "lost", "crashes", "mid_sync", "finished", "fresh"), 0)
    started = time.monotonic()
    for n in range(1, trials + 1):
        r = rig.trial()
        tally["trials"] += 1
        tally["corrupt"] += bool(r.corrupt)
        tally["lost"] += bool(r.lost)
        tally["crashes"] += bool(r.crashes)
        tally["mid_sync"] += r.mid_sync
        tally["finished"] += r.finished_before_kill
        tally["fresh"] += r.kind == "fresh"
        for problem in (*r.corrupt, *r.lost, *r.crashes):
            print(f"  trial {n} ({r.kind}, kill at {r.delay_s:.3f}s): {problem}")
        if n % 20 == 0:
            print(f"  {n} trials, {time.monotonic() - started:.0f}s, {tally}")
    return tally


def hostile(work: Path, bomb_mb: int, long_chars: int) -> dict[str, int]:
    root = work / "hostile"
    expect = make_hostile_corpus(root, bomb_mb=bomb_mb, long_chars=long_chars)
    env = cli_env(work, DOCSHELF_CHUNK__MAX_TOKENS="256", DOCSHELF_CHUNK__OVERLAP_TOKENS="32",
                  DOCSHELF_EMBED__BATCH_SIZE="32")  # fmt: skip
    started = time.monotonic()
    code, stderr, skipped, indexed, rss = index_hostile(root, work / "hostile-data", env)
    crashed = code != 0 or "Traceback" in stderr
    if crashed:
        print(stderr[-3000:])
    unaccounted = [r for r in expect if printable(r) not in skipped and r not in indexed]
    unskipped = [r for r, what in expect.items() if what == "skip" and printable(r) not in skipped]
    print(f"hostile: {len(expect)} files, {len(skipped)} skipped with a reason, {len(indexed)} indexed, "
          f"{len(unaccounted)} unaccounted, {len(unskipped)} not skipped though malformed; "
          f"peak RSS {rss.own / 1024:.0f} MB (its parse worker {rss.children / 1024:.0f} MB) "
          f"({bomb_mb} MB Office bombs, {long_chars:,}-char lines), "
          f"{time.monotonic() - started:.0f}s")  # fmt: skip
    return {"crashes": int(crashed) + len(unaccounted) + len(unskipped), "rss_mb": max(rss) // 1024}


def escapes(work: Path) -> int:
    """Traversal probes and a folder swapped for an outside symlink, against the in-process server."""
    import anyio
    from mcp import Client

    from docshelf.config import load_settings
    from docshelf.embed import HashEmbedder
    from docshelf.server import create_server
    from docshelf.testing import Stages

    secret = "BENCH-SECRET-0xBADC0DE"
    corpus = work / "access" / "corpus"
    shutil.copytree(SAMPLES, corpus)
    (corpus.parent / "secret.md").write_text(f"# Secret\n\n{secret}\n", "utf-8")
    settings = load_settings(collection="test")
    settings.store.data_dir = work / "access" / "data"
    runtime = Stages(settings, embedder=HashEmbedder())
    runtime.indexer().sync("test", [corpus])
    outside = work / "access" / "outside"
    outside.mkdir()
    (outside / "deploy.md").write_text(f"# Deploy\n\n{secret}\n", "utf-8")
    shutil.rmtree(corpus / "runbooks")
    os.symlink(outside, corpus / "runbooks")

    async def main() -> list[tuple[str, str]]:
        async with Client(create_server(settings, runtime)) as client:
            bad = await probe_all(client, [secret, "root:x:0:0"])
            swapped = await client.call_tool("read_document", {"document": "runbooks/deploy.md"})
            text = " ".join(getattr(c, "text", "") for c in swapped.content)
            if not swapped.is_error or secret in text:
                bad.append(("symlinked folder", "read through"))
            return bad

    try:
        bad = anyio.run(main)
    finally:
        runtime.close()
    for probe, what in bad:
        print(f"  escape: {probe}: {what}")
    print(f"access: {len(bad)} escapes")
    return len(bad)


def ann_edits(work: Path, sequences: int, seed: int) -> dict[str, int]:
    """Random edit sequences on a 300-document store with HNSW on; ANN answers vs an exact scan."""
    import random

    rng = random.Random(seed)
    tally = {"sequences": 0, "edits": 0, "checked": 0, "stale": 0}
    started = time.monotonic()
    for n in range(sequences):
        rig = AnnRig(work / f"ann{n}", docs=300)
        try:
            ops = [
                (rng.choice(("edit", "edit", "delete", "add")),
                 LAST if rng.random() < 0.4 else rng.randrange(300), rng.randrange(1, 10**6))
                for _ in range(rng.randint(1, 40))
            ]  # fmt: skip
            edited = rig.apply(ops)
            problems = rig.stale(edited)
            rig.reopen()
            problems += rig.stale(edited)
        finally:
            rig.close()
            shutil.rmtree(work / f"ann{n}", ignore_errors=True)
        tally["sequences"] += 1
        tally["edits"] += len(ops)
        tally["checked"] += 2 * len(edited)
        tally["stale"] += len(problems)
        for problem in problems[:3]:
            print(f"  sequence {n}: {problem}")
    print(f"ann: {tally['sequences']} edit sequences, {tally['edits']} edits, {tally['checked']} document "
          f"checks (after the edits and after a reopen), {tally['stale']} stale, "
          f"{time.monotonic() - started:.0f}s")  # fmt: skip
    return tally


def reembed_kills(work: Path, trials: int, docs: int, seed: int) -> dict[str, int]:
    """`index --reembed` SIGKILLed at random points, then a plain `index` with the new model."""
    import random

    rig = CrashRig(work, docs=docs, seed=seed)
    rig.prepare()
    seconds = calibrate_reembed(rig)
    rng = random.Random(seed)
    tally = {"trials": 0, "killed": 0, "before_start": 0, "lost": 0, "problems": 0}
    started = time.monotonic()
    for n in range(1, trials + 1):
        r = reembed_trial(rig, rng, seconds)
        tally["trials"] += 1
        tally["killed"] += r["killed"]
        tally["before_start"] += r["killed"] and not r["started"]
        tally["lost"] += r["lost"]
        tally["problems"] += len(r["problems"])
        for problem in r["problems"]:
            print(f"  trial {n} (kill at {r['delay_s']}s): {problem}")
    print(f"reembed: {docs} files, a re-embed {seconds:.2f}s; {tally['trials']} trials, {tally['killed']} "
          f"killed ({tally['before_start']} before it recorded anything), {tally['lost']} vectors lost, "
          f"{tally['problems']} problems, {time.monotonic() - started:.0f}s")  # fmt: skip
    return tally


def lock_stress(work: Path, rounds: int, writers: int) -> int:
    started = time.monotonic()
    overlaps = stress(work / "lock", rounds, writers)
    print(f"lock: {rounds} rounds of {writers} short-lived writers, {overlaps} overlaps, "
          f"{time.monotonic() - started:.0f}s")  # fmt: skip
    return overlaps


def docx_bomb(mb: int) -> float:
    """Seconds to parse a well-formed .docx whose body unpacks to ``mb`` MB (~100:1)."""
    from hostile import valid_bomb

    from docshelf.parse import default_registry

    data = valid_bomb("docx", mb)
    started = time.perf_counter()
    default_registry().parse(data, "bomb.docx")
    seconds = time.perf_counter() - started
    print(f"docx bomb: {mb} MB unpacked parsed in {seconds:.1f}s")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--trials", type=int, default=120)
    parser.add_argument("--docs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bomb-mb", type=int, default=16)
    parser.add_argument("--long-chars", type=int, default=1_000_000)
    parser.add_argument("--ann-sequences", type=int, default=300)
    parser.add_argument("--reembed-trials", type=int, default=40)
    parser.add_argument("--lock-rounds", type=int, default=2000)
    parser.add_argument("--lock-writers", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated parts: " + ",".join(PARTS))
    parser.add_argument("--workdir", type=Path, default=None, help="kept afterwards when given")
    args = parser.parse_args()
    parts = set(args.only.split(",")) if args.only else set(PARTS)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="docshelf-reliability-"))
    os.environ["XDG_DATA_HOME"] = str(work / "xdg")  # never the user's index
    load = os.getloadavg()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {load[0]:.1f} {load[1]:.1f} "
          f"{load[2]:.1f}; command: {' '.join(sys.argv)}")  # fmt: skip
    none = {"trials": 0, "corrupt": 0, "lost": 0, "crashes": 0, "mid_sync": 0, "finished": 0, "fresh": 0}
    crash, bad_input, leaked = dict(none), {"crashes": 0, "rss_mb": 0}, 0
    ann, reembed, overlaps = {"stale": 0}, {"lost": 0, "problems": 0, "trials": 0}, 0
    try:
        if "crash" in parts:
            crash = crash_trials(work / "crash", args.trials, args.docs, args.seed)
        if "hostile" in parts:
            bad_input = hostile(work, args.bomb_mb, args.long_chars)
        if "access" in parts:
            leaked = escapes(work)
        if "ann" in parts:
            ann = ann_edits(work / "ann", args.ann_sequences, args.seed)
        if "reembed" in parts:
            reembed = reembed_kills(work / "reembed", args.reembed_trials, args.docs, args.seed)
        if "lock" in parts:
            overlaps = lock_stress(work, args.lock_rounds, args.lock_writers)
        if "bomb" in parts:
            docx_bomb(3)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    crashes = crash["crashes"] + bad_input["crashes"] + reembed["problems"]
    print(
        f"\ntrials {crash['trials']} (mid-sync kills {crash['mid_sync']}, finished before the kill "
        f"{crash['finished']}, fresh index {crash['fresh']}) / corrupt {crash['corrupt']} / "
        f"lost {crash['lost']} / crashes {crashes} / escapes {leaked}; hostile peak RSS "
        f"{bad_input['rss_mb']} MB; ANN stale {ann['stale']}; re-embed kills {reembed['trials']}, "
        f"vectors lost {reembed['lost']}; lock overlaps {overlaps}"
    )
    bad = crash["corrupt"] or crash["lost"] or crashes or leaked or ann["stale"] or reembed["lost"]
    bad = bad or overlaps
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
