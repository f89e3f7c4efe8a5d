"""An index in a folder this user cannot write is searched all the same, and read commands never
create an empty index where there is none.

Searching used to fail with "unable to open database file": opening set the WAL journal mode,
ran migrations and created folders, and tantivy took a lock file, all of them writes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from crashkit import cli_env
from permkit import as_plain_user, plain_user_command

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
