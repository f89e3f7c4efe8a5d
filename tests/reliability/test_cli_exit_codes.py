"""Exit codes as docs/cli.md's table says, each failure one line; a failed `index` into a new
data dir leaves no empty index behind.

An unreadable root exited 5 with "check free disk space"; `--data-dir FILE` said "File exists";
`index FILE` into a fresh data dir made an empty index there, then said the file is under no
root (exit 1). Permission bits count only for another user: those tests run as uid 65534.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from crashkit import cli_env
from permkit import as_nobody

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "corpus"


def _cli(cwd: Path, *args: str, user: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = user or [sys.executable, "-m", "docshelf"]
    env = {**cli_env(cwd), "HOME": str(cwd), "XDG_CACHE_HOME": str(cwd / "cache")}
    return subprocess.run([*cmd, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def _one_error(proc: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


def test_a_data_dir_that_is_a_file_is_named_as_one(tmp_path: Path) -> None:
    afile = tmp_path / "index.txt"
    afile.write_text("not an index\n", encoding="utf-8")
    for args in (["status"], ["search", "x"], ["index", str(SAMPLES)], ["compact"]):
        line = _one_error(_cli(tmp_path, *args, "--data-dir", str(afile)), 2, "is a file")
        assert "File exists" not in line
    assert afile.read_text(encoding="utf-8") == "not an index\n"


def test_bad_arguments_exit_2_and_what_is_missing_exits_7(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert _cli(tmp_path, "index", str(SAMPLES), "--data-dir", str(data)).returncode == 0
    for args in (
        ["read", "runbooks/deploy.md:500-600"],  # past the end: was exit 1, "unexpected"
        ["read", "runbooks/deploy.md:9-3"],
        ["search", "x", "--path", "*a" * 120],
    ):
        _one_error(_cli(tmp_path, *args, "--data-dir", str(data)), 2)
    _one_error(_cli(tmp_path, "read", "runbooks/nothing.md", "--data-dir", str(data)), 7)
    _one_error(_cli(tmp_path, "show", "0" * 32, "--data-dir", str(data)), 7)
    missing = tmp_path / "missing"
    for args in (["compact"], ["migrate", "--to", "postgresql://u@127.0.0.1:9/db"], ["forget", "a.md"]):
        _one_error(_cli(tmp_path, *args, "--data-dir", str(missing)), 7, "no index at")
    assert not missing.exists()  # none of them made one


def test_a_failed_index_into_a_new_data_dir_leaves_nothing(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    outside = tmp_path / "loose.md"
    outside.write_text("# Loose\n\nnot under any root\n", encoding="utf-8")
    # a file is indexed only under an indexed folder: refused as outside the corpus roots (8)
    refused = _cli(tmp_path, "index", str(outside), "--data-dir", str(fresh))
    _one_error(refused, 8, "not under an indexed folder")
    assert not fresh.exists()
    _one_error(_cli(tmp_path, "index", str(tmp_path / "gone.md"), "--data-dir", str(fresh)), 3, "not exist")
    assert not fresh.exists()
    # an index that was there stays, and so does a folder the user made
    kept = tmp_path / "kept"
    assert _cli(tmp_path, "index", str(SAMPLES), "--data-dir", str(kept)).returncode == 0
    before = sorted(p.name for p in kept.iterdir())
    _one_error(_cli(tmp_path, "index", str(outside), "--data-dir", str(kept)), 8)
    assert sorted(p.name for p in kept.iterdir()) == before
    made = tmp_path / "made"
    made.mkdir()
    _one_error(_cli(tmp_path, "index", str(outside), "--data-dir", str(made)), 8)
    assert made.is_dir()


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder uid 65534 may enter and write (pytest's temporary folders are private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="docshelf-rc-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_an_unreadable_root_exits_3_and_says_so(open_folder: Path) -> None:
    nobody = as_nobody()
    if os.geteuid() != 0:
        pytest.skip("needs root to make a folder another user cannot read")
    private = open_folder / "private"
    private.mkdir(mode=0o700)
    (private / "a.md").write_text("# A\n\nsecret\n", encoding="utf-8")
    (open_folder / "locked.md").write_text("# L\n\nlocked\n", encoding="utf-8")
    (open_folder / "locked.md").chmod(0o600)
    data = open_folder / "data"
    for target in (private, open_folder / "locked.md"):
        proc = _cli(open_folder, "index", str(target), "--data-dir", str(data), user=nobody)
        line = _one_error(proc, 3, "cannot read", str(target), "ermission denied")
        assert "disk space" not in line
        assert not data.exists()


def test_an_index_this_user_cannot_open_exits_5(open_folder: Path) -> None:
    nobody = as_nobody()
    if os.geteuid() != 0:
        pytest.skip("needs root to make an index another user cannot read")
    data = open_folder / "data"
    assert _cli(open_folder, "index", str(SAMPLES), "--data-dir", str(data)).returncode == 0
    data.chmod(0o700)  # root's own
    for args in (["status"], ["search", "deploy"]):
        _one_error(_cli(open_folder, *args, "--data-dir", str(data), user=nobody), 5, str(data))
    walled = open_folder / "walled"
    walled.mkdir(mode=0o755)  # nobody may not create the data dir inside it
    proc = _cli(open_folder, "index", str(SAMPLES), "--data-dir", str(walled / "data"), user=nobody)
    _one_error(proc, 5, "ermission denied")


def test_a_port_in_use_is_a_bad_setting_not_a_missing_source(tmp_path: Path) -> None:
    """uvicorn exits 3 when it cannot bind, which the table reads as "missing or unreadable source"."""
    import socket

    data = tmp_path / "data"
    assert _cli(tmp_path, "index", str(SAMPLES), "--data-dir", str(data)).returncode == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        proc = _cli(tmp_path, "serve", "--http", "--port", port, "--data-dir", str(data))
    _one_error(proc, 2, "could not listen", f"127.0.0.1:{port}", "--port")
