"""Soak: 2 `docshelf serve` processes and 1 `docshelf watch` on one index while files churn.

Every search must answer without error; every hit's chunk_id must either read back through
`read_passage` (the same chunk) or be reported gone with a clean isError (the document was
re-indexed between the search and the read). After the churn stops and the watcher's last sync
lands, the live index must equal a fresh full index of the same files.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from docshelf.config import load_settings
from docshelf.testing import Stages

WORDS = [
    "alpha", "ingest", "queue", "certificate", "rotation", "backup", "restore", "failover", "deploy",
    "rollback", "kernel", "quota", "billing", "invoice", "ledger", "audit", "token", "secret",
    "cluster", "shard", "replica", "latency", "budget",
]  # fmt: skip
QUERIES = [
    "ingest queue", "certificate rotation", "backup restore", "failover", "rollback deploy",
    "billing invoice", "audit ledger", "cluster shard replica", "latency budget", "kernel quota",
]  # fmt: skip


# read_passage's clean answers for a chunk re-indexed between the search and the read
GONE = ("unknown chunk id", "removed from the index", "replaced by a re-index")


def _env(tmp: Path, embed_model: str = "hash") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(
        DOCSHELF_EMBED__MODEL=embed_model,
        DOCSHELF_STORE__DATA_DIR=str(tmp / "data"),
        DOCSHELF_WATCH__DEBOUNCE_MS="100",
        XDG_DATA_HOME=str(tmp / "xdg"),
        PYTHONUNBUFFERED="1",
    )
    return env


def _doc(rng: random.Random, name: str) -> str:
    paras = [" ".join(rng.choices(WORDS, k=rng.randint(20, 60))) + "." for _ in range(rng.randint(1, 4))]
    return f"# {name}\n\n" + "\n\n".join(paras) + "\n"


def _docshelf(*args: str) -> list[str]:
    return [sys.executable, "-m", "docshelf", *args]


def index_contents(data_dir: Path) -> tuple[int, set[tuple[str, str]]]:
    """(document count, {(path, chunk text)}) of the index in ``data_dir``."""
    with _runtime(data_dir) as rt:
        docs = list(rt.store.iter_documents())
        chunks = {(d.path, c.text) for d in docs for c in rt.store.document_chunks(d.id)}
        return len(docs), chunks


def _runtime(data_dir: Path) -> Stages:
    settings = load_settings()
    settings.store.data_dir = data_dir
    settings.embed.model = "hash"
    return Stages(settings)


def _health(data_dir: Path) -> dict[str, Any]:
    with _runtime(data_dir) as rt:
        raw = rt.store.get_meta("watch_health")
    value: dict[str, Any] = json.loads(raw) if raw else {}
    return next(iter(value.values()), {})


class Churn(threading.Thread):
    """Creates, edits, renames and deletes files until stopped; remembers when it last touched one."""

    def __init__(self, corpus: Path, seed: int = 7, pause: float = 0.05) -> None:
        super().__init__(name="soak-churn", daemon=True)
        self.corpus, self.rng, self.pause = corpus, random.Random(seed), pause
        self.stop_event = threading.Event()
        self.ops = {"create": 0, "edit": 0, "rename": 0, "delete": 0}
        self.last_change = time.time()
        self.error: BaseException | None = None
        self._n = 1000

    def run(self) -> None:
        try:
            while not self.stop_event.wait(self.pause):
                self.step()
        except BaseException as exc:  # reported by the test
            self.error = exc

    def step(self) -> None:
        files = sorted(self.corpus.glob("*.md"))
        op = self.rng.choice(["create", "edit", "edit", "rename", "delete"] if len(files) > 5 else ["create"])
        if op == "create":
            self._n += 1
            (self.corpus / f"new{self._n}.md").write_text(_doc(self.rng, f"new{self._n}"))
        elif op == "edit":
            target = self.rng.choice(files)
            target.write_text(_doc(self.rng, target.stem))
        elif op == "rename":
            self._n += 1
            self.rng.choice(files).rename(self.corpus / f"moved{self._n}.md")
        else:
            self.rng.choice(files).unlink()
        self.ops[op] += 1
        self.last_change = time.time()


async def _client_loop(params: StdioServerParameters, n: int, stats: dict[str, Any], seed: int) -> None:
    rng = random.Random(seed)
    async with Client(params) as client:
        for _ in range(n):
            query = rng.choice(QUERIES)
            started = time.perf_counter()
            result = await client.call_tool("search", {"query": query, "k": 3, "mode": "hybrid"})
            stats["latencies"].append(time.perf_counter() - started)
            stats["searches"] += 1
            if result.is_error or not result.structured_content:
                stats["errors"].append(f"search {query!r}: {result.content}")
                continue
            meta = result.structured_content
            fresh = (meta.get("index_age"), meta.get("stale_documents"))
            if not isinstance(fresh[0], float | int) or not isinstance(fresh[1], int):
                stats["errors"].append(f"search {query!r}: no index_age/stale_documents in {sorted(meta)}")
            for hit in result.structured_content["hits"]:
                read = await client.call_tool("read_passage", {"chunk_id": hit["chunk_id"]})
                if read.is_error:
                    text = read.content[0].text if read.content else ""  # type: ignore[union-attr]
                    if any(m in text for m in GONE):
                        stats["gone"] += 1  # re-indexed between search and read: a clean answer
                    else:
                        stats["errors"].append(f"read_passage {hit['chunk_id']}: {text}")
                    continue
                passages = (read.structured_content or {}).get("passages", [])
                target = [p for p in passages if p["is_target"]]
                if not target or target[0]["chunk_id"] != hit["chunk_id"]:
                    stats["errors"].append(f"read_passage {hit['chunk_id']} returned another chunk")
                else:
                    stats["resolved"] += 1


def run_soak(tmp: Path, searches: int, files: int = 30, embed_model: str = "hash") -> dict[str, Any]:
    """Run the soak in ``tmp``; returns counts, latencies and whether the index converged."""
    corpus = tmp / "corpus"
    corpus.mkdir(parents=True)
    rng = random.Random(1)
    for i in range(files):
        (corpus / f"doc{i}.md").write_text(_doc(rng, f"doc{i}"))
    env = _env(tmp, embed_model)
    data = tmp / "data"
    subprocess.run(_docshelf("index", str(corpus)), env=env, check=True, capture_output=True, timeout=300)
    watch_log = (tmp / "watch.log").open("w")
    watcher = subprocess.Popen(_docshelf("watch"), env=env, stdout=watch_log, stderr=subprocess.STDOUT)
    stats: dict[str, Any] = {"searches": 0, "resolved": 0, "gone": 0, "errors": [], "latencies": []}
    churn = Churn(corpus)
    try:
        deadline = time.monotonic() + 60
        while _health(data).get("state") != "running":
            assert watcher.poll() is None, (tmp / "watch.log").read_text()
            assert time.monotonic() < deadline, "the watcher did not start"
            time.sleep(0.1)
        churn.start()
        cmd = _docshelf("-v", "serve")  # -v: an unexpected exception comes with its traceback
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)

        async def main() -> None:
            async with anyio.create_task_group() as tg:
                for seed in (1, 2):
                    tg.start_soon(_client_loop, params, searches // 2, stats, seed)

        anyio.run(main)
        churn.stop_event.set()
        churn.join(10)
        assert churn.error is None, churn.error
        # quiescence: the events of the last change have arrived and a sync finished after them
        quiet = churn.last_change
        deadline = time.monotonic() + 30
        while True:
            health = _health(data)
            last_event, last_sync = health.get("last_event_at") or 0, health.get("last_sync_at") or 0
            if last_event >= quiet and last_sync > last_event:
                break
            assert watcher.poll() is None, (tmp / "watch.log").read_text()
            assert time.monotonic() < deadline, f"no sync after the last change: {health}"
            time.sleep(0.1)
        live = index_contents(data)
        fresh_env = {**env, "DOCSHELF_STORE__DATA_DIR": str(tmp / "fresh")}
        subprocess.run(
            _docshelf("index", str(corpus)), env=fresh_env, check=True, capture_output=True, timeout=300
        )
        fresh = index_contents(tmp / "fresh")
        stats.update(ops=churn.ops, health=_health(data), live_docs=live[0], fresh_docs=fresh[0])
        stats["missing_chunks"] = sorted(fresh[1] - live[1])[:5]
        stats["extra_chunks"] = sorted(live[1] - fresh[1])[:5]
        stats["converged"] = live == fresh
        stats["disk_files"] = len(list(corpus.glob("*.md")))
    finally:
        churn.stop_event.set()
        watcher.terminate()
        try:
            watcher.wait(timeout=15)
        except subprocess.TimeoutExpired:
            watcher.kill()
            watcher.wait()
        watch_log.close()
    return stats


def test_two_servers_and_a_watcher_under_churn(tmp_path: Path) -> None:
    searches = int(os.environ.get("SOAK_SEARCHES", "2000"))  # the figure; ~20 s here
    stats = run_soak(tmp_path, searches)
    assert stats["searches"] == searches
    assert stats["errors"] == []
    assert stats["resolved"] > 0
    assert sum(stats["ops"].values()) > 20 and all(stats["ops"].values())
    assert stats["health"]["restarts"] == 0, stats["health"]
    assert stats["live_docs"] == stats["fresh_docs"] == stats["disk_files"]
    assert stats["converged"], (stats["missing_chunks"], stats["extra_chunks"])
    print(f"soak: {stats['searches']} searches, {stats['resolved']} hits read back, {stats['gone']} gone")
