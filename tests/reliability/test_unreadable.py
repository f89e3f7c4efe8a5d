"""Files and folders that exist but cannot be read: kept, reported, and the run goes on.

A file read failing for a moment (permissions, a flaky mount) used to count as a deletion, and one
unreadable folder (or its .gitignore, or /proc/1/cwd) aborted the whole run. Permissions are real
here: as root the child runs without the capabilities that bypass them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from crashkit import _read_docs, cli_env, file_text
from permkit import as_plain_user


def _index(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docshelf", "index", *args, "--data-dir", str(data)],
        env=cli_env(data.parent), capture_output=True, text=True, timeout=120, preexec_fn=as_plain_user(),
    )  # fmt: skip


def _versions(data: Path) -> dict[str, int]:
    return {path: v for path, (_, v) in _read_docs(data / "docshelf.db").items()}


def _write(path: Path, doc: int, version: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(file_text(doc, version), "utf-8")


def test_a_file_that_cannot_be_read_keeps_its_indexed_version(tmp_path: Path) -> None:
    corpus, data = tmp_path / "corpus", tmp_path / "data"
    for d in range(4):
        _write(corpus / f"f{d:03d}.txt", d, 1)
    assert _index(data, str(corpus)).returncode == 0
    _write(corpus / "f002.txt", 2, 2)
    (corpus / "f001.txt").chmod(0)
    try:
        proc = _index(data)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert "0 removed" in proc.stderr and "f001.txt" in proc.stderr, proc.stderr
        assert _versions(data) == {"f000.txt": 1, "f001.txt": 1, "f002.txt": 2, "f003.txt": 1}
    finally:
        (corpus / "f001.txt").chmod(0o644)
    again = _index(data)
    assert again.returncode == 0 and "0 removed" in again.stderr and "4 unchanged" in again.stderr


def test_an_unreadable_folder_or_gitignore_skips_that_folder_only(tmp_path: Path) -> None:
    corpus, data = tmp_path / "corpus", tmp_path / "data"
    _write(corpus / "f000.txt", 0, 1)
    _write(corpus / "locked" / "f001.txt", 1, 1)
    _write(corpus / "ignored" / "f002.txt", 2, 1)
    (corpus / "ignored" / ".gitignore").write_text("*.log\n")
    assert _index(data, str(corpus)).returncode == 0
    _write(corpus / "f000.txt", 0, 2)
    (corpus / "locked").chmod(0)
    (corpus / "ignored" / ".gitignore").chmod(0)
    try:
        proc = _index(data)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert "0 removed" in proc.stderr, proc.stderr
        assert "locked" in proc.stderr and "ignored" in proc.stderr and "skipped" in proc.stderr
        assert _versions(data) == {"f000.txt": 2, "locked/f001.txt": 1, "ignored/f002.txt": 1}
    finally:
        (corpus / "locked").chmod(0o755)
        (corpus / "ignored" / ".gitignore").chmod(0o644)


def test_indexing_a_proc_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    """/proc/1 has cwd, root and exe links it may not follow; it once aborted with a traceback."""
    proc = _index(tmp_path / "data", "/proc/1", "--json")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "/proc" in errors[0], proc.stderr
    assert _index(tmp_path / "data", "--json").returncode != 0  # no root was stored for later runs
