"""An index in a folder this user cannot write is searched all the same, and read commands never
create an empty index where there is none.

Searching used to fail with "unable to open database file": opening set the WAL journal mode,
ran migrations and created folders, and tantivy took a lock file, all of them writes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from crashkit import cli_env
from permkit import as_nobody, as_plain_user, plain_user_command

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "corpus"


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docshelf", *args, "--data-dir", str(data)], env=cli_env(data.parent),
        capture_output=True, text=True, timeout=120, preexec_fn=as_plain_user(),
    )  # fmt: skip


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def _set_writable(folder: Path, writable: bool) -> None:
    for path in (folder, *folder.rglob("*")):
        mode = path.stat().st_mode
        path.chmod(mode | 0o200 if writable else mode & ~0o222)


@pytest.fixture(scope="module")
def read_only_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    data = tmp_path_factory.mktemp("ro") / "data"
    indexed = subprocess.run(
        [sys.executable, "-m", "docshelf", "index", str(SAMPLES), "--data-dir", str(data)],
        env=cli_env(data.parent), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert indexed.returncode == 0, indexed.stderr
    _set_writable(data, False)
    yield data
    _set_writable(data, True)


def test_search_and_status_work_on_a_read_only_index(read_only_index: Path) -> None:
    before = _snapshot(read_only_index)
    found = _cli(read_only_index, "search", "page the on-call engineer", "--json")
    assert found.returncode == 0, found.stderr
    assert "runbooks/incident-response.md" in {h["path"] for h in json.loads(found.stdout)["hits"]}
    status = _cli(read_only_index, "status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["documents"] == 8
    assert _snapshot(read_only_index) == before  # nothing written


def test_serve_read_only_answers_from_a_read_only_index(read_only_index: Path) -> None:
    from mcp import Client, StdioServerParameters

    cmd = plain_user_command(
        [sys.executable, "-m", "docshelf", "serve", "--read-only", "--data-dir", str(read_only_index)]
    )

    async def main() -> list[str]:
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=cli_env(read_only_index.parent))
        async with Client(params) as client:
            result = await client.call_tool("search", {"query": "page the on-call engineer", "k": 3})
            assert not result.is_error and result.structured_content, result
            return [h["citation"] for h in result.structured_content["hits"]]

    assert any(c.startswith("runbooks/incident-response.md") for c in anyio.run(main))


def test_read_commands_never_create_an_index_where_there_is_none(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here"
    for args in (("search", "anything"), ("status",)):
        proc = _cli(missing, *args)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "docshelf index" in errors[0], proc.stderr
        assert not missing.exists()
    assert os.listdir(tmp_path) == []


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder every user may read (pytest's own temporary folders are private to this one)."""
    folder = Path(tempfile.mkdtemp(prefix="docshelf-ro-"))
    folder.chmod(0o755)
    yield folder
    _set_writable(folder, True)
    shutil.rmtree(folder, ignore_errors=True)


def test_another_user_searches_a_folder_it_cannot_write(open_folder: Path) -> None:
    """As a user who may not write the data folder, given as a relative path (`--data-dir data`),
    a keyword search warned that the keyword index "is missing or was damaged" and found nothing:
    the links to its files that tantivy reads through (it takes a lock file even to read) pointed
    at the relative path from a temporary folder. Hybrid quietly lost its keyword side; status
    called the keyword index behind the database."""
    data = open_folder / "data"
    built = subprocess.run(
        [sys.executable, "-m", "docshelf", "index", str(SAMPLES), "--data-dir", str(data)],
        env=cli_env(open_folder), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    for path in (open_folder, *open_folder.rglob("*")):
        path.chmod(path.stat().st_mode | 0o444 | (0o111 if path.is_dir() else 0))
    _set_writable(data, False)
    before = _snapshot(data)
    nobody = as_nobody()
    env = {**cli_env(open_folder), "HOME": str(open_folder), "XDG_CACHE_HOME": str(open_folder / "cache")}

    def docshelf(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*nobody, *args, "--data-dir", "data"], env=env, cwd=open_folder,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert "damaged" not in done.stderr and "behind" not in done.stdout + done.stderr, done
        return done

    for mode in ("keyword", "hybrid"):
        found = json.loads(docshelf("search", "escalation policy", "--mode", mode, "--json").stdout)
        hits = found["hits"]
        assert hits and hits[0]["path"] == "runbooks/incident-response.md", found
        assert hits[0]["ranks"].get("keyword") == 1, hits[0]  # the keyword side answered
    status = json.loads(docshelf("status", "--json").stdout)
    assert status["documents"] == 8
    assert _snapshot(data) == before
