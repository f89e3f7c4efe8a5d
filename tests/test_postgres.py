"""What only the PostgreSQL backend has: DSN settings, SQL filters, migrate, concurrent indexers.

The shared behaviour (sync, search, MCP tools) runs against both stores in test_index.py,
test_search.py and test_server.py.
"""

from __future__ import annotations

import fnmatch
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from docshelf.cli import app
from docshelf.config import Settings, load_settings
from docshelf.embed import HashEmbedder
from docshelf.shelf import Shelf
from docshelf.store.base import SearchFilter
from docshelf.store.postgres.schema import MIGRATIONS
from docshelf.store.postgres.sql import glob_to_regex
from docshelf.testing import Stages


def test_dsn_shorthand_and_nested_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCSHELF_STORE", "postgresql://team:secret@db.internal/docs")
    monkeypatch.setenv("DOCSHELF_STORE__POOL_SIZE", "9")
    s = load_settings()
    assert s.store.url == "postgresql://team:secret@db.internal/docs"
    assert s.store.backend == "postgres" and s.store.pool_size == 9


def test_non_postgres_url_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from docshelf.errors import ConfigError

    monkeypatch.setenv("DOCSHELF_STORE__URL", "mysql://x/y")
    with pytest.raises(ConfigError, match="postgresql://"):
        load_settings()


def _pg_settings(tmp_path: Path, dsn: str, name: str = "data") -> Settings:
    s = load_settings(collection="test")
    s.store.data_dir = tmp_path / name
    s.store.url = dsn
    s.embed.model = "hash"
    s.chunk.max_tokens = 64
    s.chunk.overlap_tokens = 8
    return s


_GLOB_CHARS = st.sampled_from([*list("ab/.-_*?[]!"), "x y", "ü", "+", "(", "$", "^", "\\", "{1}", "|"])


@hyp_settings(max_examples=200, deadline=None)
@given(
    glob=st.lists(_GLOB_CHARS, min_size=1, max_size=6).map("".join),
    path=st.lists(st.sampled_from(list("ab/.-_!x ü+($^\\|{}1")), max_size=8).map("".join),
)
def test_glob_filter_in_sql_matches_fnmatch(pg_conn: Any, glob: str, path: str) -> None:
    """The path filter runs as a PostgreSQL regex; it must agree with Python's fnmatchcase."""
    ours = pg_conn.execute("SELECT %s ~ %s", (path, glob_to_regex(glob))).fetchone()[0]
    assert ours == fnmatch.fnmatchcase(path, glob), (glob, path, glob_to_regex(glob))


@pytest.fixture(scope="module")
def pg_conn(pg_server: str) -> Any:
    import psycopg

    with psycopg.connect(pg_server, autocommit=True) as conn:
        yield conn


def test_migrations_are_versioned_and_run_once(pg_database: str, tmp_path: Path) -> None:
    import psycopg

    for _ in range(2):
        Stages(_pg_settings(tmp_path, pg_database), embedder=HashEmbedder()).store.close()
    with psycopg.connect(pg_database) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM docshelf_schema ORDER BY version")]
    assert versions == list(range(1, len(MIGRATIONS) + 1))


def test_a_schema_1_database_is_upgraded_and_ranks_the_same(
    pg_database: str, tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 3 packs the row-per-posting table of schema 1 and drops it; rankings stay."""
    import psycopg

    from docshelf.store.postgres import postings

    monkeypatch.setattr(postings, "TAIL_MIN", 10**9)  # every posting stays in the tail
    settings = _pg_settings(tmp_path, pg_database)
    queries = ("page the on-call engineer", "Urlaub beantragen", "deploy rollback release")
    with Stages(settings, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [corpus])
        before = {q: rt.searcher().search(q, k=5, mode="keyword").hits for q in queries}
    with psycopg.connect(pg_database, autocommit=True) as conn:  # back to what schema 1 had
        conn.execute(
            "CREATE TABLE postings(term text NOT NULL, chunk bigint NOT NULL REFERENCES chunks(seq) "
            "ON DELETE CASCADE, tf integer NOT NULL, dl integer NOT NULL, collection text NOT NULL, "
            "superseded boolean NOT NULL, PRIMARY KEY(term, chunk) INCLUDE (tf, dl, collection, superseded))"
        )
        conn.execute(
            "INSERT INTO postings SELECT term, chunk, tf, dl, collection, superseded FROM posting_tail"
        )
        conn.execute("CREATE INDEX postings_chunk ON postings(chunk)")
        conn.execute("DROP TABLE posting_tail, posting_blocks, term_stats")
        conn.execute("ALTER TABLE chunks DROP COLUMN terms")
        conn.execute("ALTER TABLE corpus_stats DROP COLUMN postings, DROP COLUMN packed")
        conn.execute("DROP TABLE reembed")
        conn.execute("DELETE FROM docshelf_schema WHERE version > 1")
    monkeypatch.undo()
    with Stages(settings, embedder=HashEmbedder()) as rt:
        for q in queries:
            after = rt.searcher().search(q, k=5, mode="keyword").hits
            assert [(h.chunk_id, round(h.score, 6)) for h in after] == [
                (h.chunk_id, round(h.score, 6)) for h in before[q]
            ]
        store: Any = rt.store
        assert store._one("SELECT to_regclass('postings')")[0] is None
        packed, live = store._one("SELECT packed, postings FROM corpus_stats")
        assert packed == live > 0 and store._one("SELECT count(*) FROM posting_tail")[0] == 0


def test_concurrent_indexers_converge(pg_database: str, tmp_path: Path, corpus: Path) -> None:
    """Two writers (own lock folders, as on two machines) sync one collection at once."""
    runtimes = [
        Stages(_pg_settings(tmp_path, pg_database, f"node{i}"), embedder=HashEmbedder()) for i in range(2)
    ]
    errors: list[BaseException] = []

    def work(rt: Stages) -> None:
        try:
            for _ in range(3):
                rt.indexer().sync("test", [corpus])
        except BaseException as exc:  # surfaced below: a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(rt,)) for rt in runtimes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert not errors
        store: Any = runtimes[0].store
        docs = store._q("SELECT count(*) FROM documents")[0][0]
        chunks, terms = store._q("SELECT count(*), coalesce(sum(n_terms), 0) FROM chunks")[0]
        assert store._q("SELECT chunks, terms FROM corpus_stats")[0] == (chunks, terms)
        df = dict(store._q("SELECT term, df FROM term_stats WHERE df > 0"))
        assert df == dict(Counter(t for row in store._q("SELECT terms FROM chunks") for t in row[0]))
        # the same as one writer alone
        single = Stages(_pg_settings(tmp_path, pg_database, "node9"), embedder=HashEmbedder())
        report = single.indexer().sync("test", [corpus])
        assert not report.added and not report.updated and not report.removed
        assert docs == report.unchanged
        hits = single.searcher().search("page the on-call engineer", mode="keyword").hits
        assert hits[0].path == "runbooks/incident-response.md"
        single.close()
    finally:
        for rt in runtimes:
            rt.close()


def test_writers_on_other_machines_take_turns_per_collection(
    pg_database: str, tmp_path: Path, corpus: Path
) -> None:
    """Two indexers with their own lock folders (two machines) on one database: the second waits
    for the first instead of parsing and embedding the same files beside it, unless it writes
    another collection."""
    from docshelf.errors import StoreError

    first = Stages(_pg_settings(tmp_path, pg_database, "node1"), embedder=HashEmbedder())
    late = _pg_settings(tmp_path, pg_database, "node2")
    late.watch.lock_timeout_s = 0.3
    second = Stages(late, embedder=HashEmbedder())
    busy = r"another docshelf \(docshelf writer pid \d+ on .*\) is writing to {} in the PostgreSQL store"
    try:
        with first.indexer().writer_lock("test"):
            report = first.indexer().sync("test", [corpus])  # the lock is re-entrant for its holder
            with pytest.raises(StoreError, match=busy.format("collection 'test'")):
                second.indexer().sync("test", [corpus])
            assert second.indexer().sync("other", [corpus]).added  # another collection goes on
        with first.indexer().writer_lock(), pytest.raises(StoreError, match=busy.format("this database")):
            second.indexer().sync("other", [corpus])  # a re-embed or a migration holds them all
        # once it is free, the second finds the work done
        again = second.indexer().sync("test", [corpus])
        assert report.added and not again.added and again.unchanged == len(report.added)
    finally:
        first.close()
        second.close()


def test_migrate_copies_the_embedded_store_without_re_embedding(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, corpus: Path, pg_database: str
) -> None:
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / "data"))
    cli = CliRunner()
    assert cli.invoke(app, ["index", str(corpus)]).exit_code == 0
    result = cli.invoke(app, ["migrate", "--to", pg_database, "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["documents"] >= 8 and report["vectors_missing"] == 0

    local = load_settings(collection="samples")
    local.store.data_dir = tmp_path / "data"
    local.embed.model = "hash"
    shared = local.model_copy(deep=True)
    shared.store.url = pg_database

    class CountingEmbedder(HashEmbedder):
        calls = 0

        def embed_documents(self, texts: Any) -> Any:
            CountingEmbedder.calls += 1
            return super().embed_documents(texts)

    with Shelf(local, embedder=HashEmbedder()) as a, Shelf(shared, embedder=CountingEmbedder()) as b:
        assert a.status().chunks == b.status().chunks == report["chunks"]
        for query in ("page the on-call engineer", "Urlaub beantragen", "部署"):
            for mode in ("keyword", "semantic", "hybrid"):
                ours = [h.chunk_id for h in a.search(query, k=3, mode=mode).hits]
                theirs = [h.chunk_id for h in b.search(query, k=3, mode=mode).hits]
                assert ours == theirs, (query, mode)
        CountingEmbedder.calls = 0  # queries were embedded above
        report_b = b.index([], "samples")  # nothing changed on disk: nothing to embed
        assert CountingEmbedder.calls == 0, report_b.as_dict()
        hits = b.search("deploy", collections="samples", path_glob="runbooks/*").hits
        assert {h.path.split("/")[0] for h in hits} == {"runbooks"}
    monkeypatch.setenv("DOCSHELF_STORE", pg_database.replace("postgres@", "postgres:pw@"))
    status = json.loads(cli.invoke(app, ["status", "--json"]).stdout)  # the shared index, password hidden
    assert status["store"] == pg_database and status["chunks"] == report["chunks"]
    monkeypatch.delenv("DOCSHELF_STORE")
    again = cli.invoke(app, ["migrate", "--to", pg_database, "--json"])  # re-runnable, no duplicates
    assert again.exit_code == 0 and json.loads(again.stdout)["chunks"] == report["chunks"]


def test_migrate_from_one_postgresql_store_to_another(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, corpus: Path, pg_database: str, pg_server: str
) -> None:
    """With DOCSHELF_STORE naming the index's PostgreSQL store, `migrate --to` another one copied
    the embedded index in data_dir (empty here, stale elsewhere) instead of the index in use."""
    import psycopg

    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DOCSHELF_STORE", pg_database)
    cli = CliRunner()
    assert cli.invoke(app, ["index", str(corpus)]).exit_code == 0
    target = pg_database + "_copy"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {target.rpartition('/')[2]}")
    try:
        result = cli.invoke(app, ["migrate", "--to", target, "--json"])
        assert result.exit_code == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["documents"] >= 8 and report["vectors_missing"] == 0
        monkeypatch.setenv("DOCSHELF_STORE", target)
        status = json.loads(cli.invoke(app, ["status", "--json"]).stdout)
        assert status["chunks"] == report["chunks"]
        # set to the target already: the embedded index is what there is to copy (none: said so,
        # and none is made on the way)
        again = cli.invoke(app, ["migrate", "--to", target])
        assert again.exit_code == 7 and "there is no index at" in again.stderr
        assert not (tmp_path / "data" / "docshelf.db").exists()
    finally:
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {target.rpartition('/')[2]} WITH (FORCE)")


def test_migrate_builds_the_hnsw_index_once_after_the_copy(
    tmp_path: Path, corpus: Path, pg_database: str
) -> None:
    """The copy runs without the HNSW index (kept up row by row it costs more than one build)."""
    import psycopg

    from docshelf.store.copy import copy_store

    local = _pg_settings(tmp_path, pg_database)
    local.store.url = None
    local.store.backend = "sqlite"
    shared = _pg_settings(tmp_path, pg_database, "pg-data")

    def hnsw_present() -> bool:
        with psycopg.connect(pg_database) as conn:
            sql = "SELECT count(*) FROM pg_indexes WHERE indexname = 'chunks_hnsw'"
            return bool(conn.execute(sql).fetchone()[0])

    seen: list[bool] = []
    with Stages(local, embedder=HashEmbedder()) as a, Stages(shared, embedder=HashEmbedder()) as b:
        a.indexer().sync("test", [corpus])
        assert b.store.model() == (None, None)
        copy_store(a.store, b.store, lambda done, total: seen.append(hnsw_present()))
        assert seen and not any(seen)  # no HNSW index while documents were copied
        assert hnsw_present()
        query = b.embedder.embed_query("page the on-call engineer")
        assert [c for c, _ in b.store.vector_search(query, 3, SearchFilter())] == [
            c for c, _ in a.store.vector_search(query, 3, SearchFilter())
        ]


def test_driver_errors_become_one_line_store_errors(
    pg_database: str, tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that fails mid-run (here: a table gone) is a StoreError naming it, never a traceback."""
    from docshelf.errors import StoreError

    rt = Stages(_pg_settings(tmp_path, pg_database), embedder=HashEmbedder())
    rt.indexer().sync("test", [corpus])
    store: Any = rt.store
    with store._tx() as conn:
        conn.execute("DROP TABLE posting_blocks")
    with pytest.raises(StoreError, match=r"PostgreSQL store at .* failed: .*posting_blocks"):
        rt.searcher().search("page the on-call engineer", mode="keyword")
    with pytest.raises(StoreError, match="failed"), store._tx() as conn:
        conn.execute("INSERT INTO posting_blocks VALUES (1, 'x', 'test', false, 0, '', '', '')")
    assert len(list(store.iter_chunks())) == store.stats().chunks  # the connection pool recovered
    rt.close()
    monkeypatch.setenv("DOCSHELF_STORE", pg_database)
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(app, ["search", "on-call", "--collection", "test"])
    assert result.exit_code == 5 and "failed" in result.stderr and "Traceback" not in result.output


def test_unreachable_database_is_one_clear_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCSHELF_STORE", "postgresql://nobody:hunter2@127.0.0.1:9/none")
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(app, ["status"])
    assert result.exit_code == 5, result.output
    assert "cannot open the PostgreSQL store" in result.stderr and "hunter2" not in result.stderr
    assert "Traceback" not in result.stderr
