"""The long reliability run: SIGKILL trials, the hostile corpus at full size, traversal probes.

    python bench/reliability_bench.py [--trials 120] [--docs 60] [--bomb-mb 16] [--seed 1]

Prints trials / corrupt / lost / crashes / escapes (all bad counts must be 0; exit 1 otherwise),
plus how many kills landed mid-sync and the peak RSS of indexing the hostile corpus.
The short version of each part runs in `pytest tests/reliability`.
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
from crashkit import CrashRig, cli_env
from hostile import index_hostile, make_hostile_corpus, printable

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "corpus"


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
          f"peak RSS {rss / 1024:.0f} MB ({bomb_mb} MB Office bombs, {long_chars:,}-char lines), "
          f"{time.monotonic() - started:.0f}s")  # fmt: skip
    return {"crashes": int(crashed) + len(unaccounted) + len(unskipped), "rss_mb": rss // 1024}


def escapes(work: Path) -> int:
    """Traversal probes and a folder swapped for an outside symlink, against the in-process server."""
    import anyio
    from mcp import Client

    from docshelf.config import load_settings
    from docshelf.embed import HashEmbedder
    from docshelf.runtime import Runtime
    from docshelf.server import create_server

    secret = "BENCH-SECRET-0xBADC0DE"
    corpus = work / "access" / "corpus"
    shutil.copytree(SAMPLES, corpus)
    (corpus.parent / "secret.md").write_text(f"# Secret\n\n{secret}\n", "utf-8")
    settings = load_settings(collection="test")
    settings.store.data_dir = work / "access" / "data"
    runtime = Runtime(settings, embedder=HashEmbedder())
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--trials", type=int, default=120)
    parser.add_argument("--docs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bomb-mb", type=int, default=16)
    parser.add_argument("--long-chars", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=None, help="kept afterwards when given")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="docshelf-reliability-"))
    os.environ["XDG_DATA_HOME"] = str(work / "xdg")  # never the user's index
    try:
        crash = crash_trials(work / "crash", args.trials, args.docs, args.seed)
        bad_input = hostile(work, args.bomb_mb, args.long_chars)
        leaked = escapes(work)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    crashes = crash["crashes"] + bad_input["crashes"]
    print(
        f"\ntrials {crash['trials']} (mid-sync kills {crash['mid_sync']}, finished before the kill "
        f"{crash['finished']}, fresh index {crash['fresh']}) / corrupt {crash['corrupt']} / "
        f"lost {crash['lost']} / crashes {crashes} / escapes {leaked}; hostile peak RSS "
        f"{bad_input['rss_mb']} MB"
    )
    return 1 if crash["corrupt"] or crash["lost"] or crashes or leaked else 0


if __name__ == "__main__":
    sys.exit(main())
