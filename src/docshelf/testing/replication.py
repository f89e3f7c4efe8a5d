"""A local primary with streaming replicas (the bundled PostgreSQL binaries), for tests and bench."""

from __future__ import annotations

import time
from pathlib import Path

from docshelf.errors import StoreError
from docshelf.testing.pglocal import LocalPostgres

__all__ = ["Cluster", "replay_lag", "wait_replayed"]


class Cluster:
    """``with Cluster(folder, replicas=2) as c:`` c.primary and c.replicas are DSNs of one database."""

    def __init__(
        self, folder: Path, replicas: int = 2, database: str = "docshelf", durable: bool = False
    ) -> None:
        self.folder = folder
        self.database = database
        self.durable = durable
        self._primary = LocalPostgres(folder / "primary", durable=durable)
        self._replicas: list[LocalPostgres] = []
        self.count = replicas

    @property
    def primary(self) -> str:
        return self._dsn(self._primary)

    @property
    def replicas(self) -> list[str]:
        return [self._dsn(r) for r in self._replicas]

    def _dsn(self, server: LocalPostgres) -> str:
        return server.dsn.rsplit("/", 1)[0] + "/" + self.database

    def start(self) -> Cluster:
        import psycopg

        self._primary.start()
        try:
            with psycopg.connect(self._primary.dsn, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {self.database}")
            for i in range(self.count):
                replica = LocalPostgres(
                    self.folder / f"replica{i}", durable=self.durable, primary=self._primary.dsn
                )
                self._replicas.append(replica)
                replica.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for server in [*self._replicas, self._primary]:
            server.stop()

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def replay_lag(primary: str, replica: str) -> int:
    """Bytes of WAL the replica still has to replay to reach the primary's current position."""
    import psycopg

    with psycopg.connect(primary, autocommit=True) as p, psycopg.connect(replica, autocommit=True) as r:
        target = p.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]  # type: ignore[index]
        row = r.execute("SELECT pg_wal_lsn_diff(%s, pg_last_wal_replay_lsn())", (target,)).fetchone()
    return max(0, int(row[0])) if row and row[0] is not None else 0


def wait_replayed(primary: str, replica: str, timeout: float = 30.0) -> float:
    """Wait until ``replica`` has replayed everything ``primary`` committed so far; seconds waited.

    The target is the primary's WAL insert position: with asynchronous commit a commit record
    may not be written yet when the transaction returns, so the write position could be behind it."""
    import psycopg

    started = time.perf_counter()
    with psycopg.connect(primary, autocommit=True) as p:
        target = p.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]  # type: ignore[index]
    with psycopg.connect(replica, autocommit=True) as r:
        while True:
            row = r.execute("SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), %s) >= 0", (target,)).fetchone()
            if row and row[0]:
                return time.perf_counter() - started
            if time.perf_counter() - started > timeout:
                raise StoreError(f"replica {replica} did not replay {target} within {timeout:.0f} s")
            time.sleep(0.005)
