"""What `index` ends with and what `status` shows (real store, hash embedder)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from clikit import run, runner
from docshelf.cli.report import group_skipped
from docshelf.cli.status import ago, size


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    return runner(monkeypatch, tmp_path / "data")


def _break(corpus: Path) -> None:
    """Four files with broken frontmatter and two binary ones: two reasons, one named in full."""
    for n in range(4):
        (corpus / f"bad-{n}.md").write_text(f"---\ntitle: [unclosed {n}\n---\nbody\n", encoding="utf-8")
    for n in range(2):
        (corpus / f"blob-{n}.md").write_bytes(b"\x00\x01\x02 not text")


def test_reason_kinds_group_like_reasons() -> None:
    skipped = [
        ("a.html", "declares charset 'UTF-8' but is not valid text in it; convert it to UTF-8"),
        ("b.html", "declares charset 'UTF-8' but is not valid text in it; convert it to UTF-8"),
        ("big.pdf", "too large (62.3 MB > 50 MB cap; raise sources.max_file_mb)"),
        ("x.rtf", "no parser for .rtf"),
        ("y.rtf", "no parser for .rtf"),
        ("z.pdf", "parser failed: ValueError: bad xref"),
        ("scan.pdf", "no text layer on any of its 3 page(s) (a scan?)"),
    ]
    groups = group_skipped(skipped)
    assert list(groups) == [
        "declares charset 'UTF-8' but is not valid text in it",  # "UTF-8" is a name, not a number
        "no parser for .rtf",
        "no text layer on any of its N page(s)",
        "parser failed",
        "too large",
    ]
    assert groups["no parser for .rtf"] == [("x.rtf", "no parser for .rtf"), ("y.rtf", "no parser for .rtf")]


def test_index_summary_groups_skipped_files(cli: CliRunner, corpus: Path) -> None:
    _break(corpus)
    code, _, err = run(cli, "index", str(corpus))
    assert code == 0
    lines = err.splitlines()
    assert lines[0].startswith("samples: 8 added, 0 updated, 0 removed, 0 unchanged; ")
    assert "1 excluded (rag: false): notes/private-draft.md" in lines
    flat = " ".join(err.split())
    # one line: the kinds and their counts; the paths and details with --skipped
    # the hint names the read-only listing: `index --skipped` would sync again (and compute every
    # vector an `index --keyword-only` left) only to list what was skipped
    said = "6 skipped: malformed frontmatter at line N (4), binary file (2); docshelf status --skipped"
    assert said in flat
    assert lines[2].startswith("6 skipped: ") and all(line.startswith("    ") for line in lines[3:]), lines
    assert "bad-0.md" not in err and "unclosed" not in err
    assert max(cell_len(line) for line in lines) <= 80

    code, out, _ = run(cli, "status", "--skipped")
    assert code == 0
    for n in range(4):
        assert any(f"bad-{n}.md: malformed frontmatter at line 3" in line for line in out.splitlines())
    assert " ".join(out.split()).count("remove the frontmatter") == 1  # the shared advice, said once

    code, _, err = run(cli, "index", str(corpus), "--skipped")
    assert code == 0
    for n in range(4):
        assert any(f"bad-{n}.md: malformed frontmatter at line 3" in line for line in err.splitlines())
    assert any("blob-1.md" in line for line in err.splitlines())
    assert max(cell_len(line) for line in err.splitlines()) <= 80


def test_a_resync_of_an_unchanged_tree_says_its_skips_in_one_line(cli: CliRunner, corpus: Path) -> None:
    """Each kind of skip had a line of its own: 99 lines of old skips after a sync that changed
    nothing."""
    for n in range(30):
        (corpus / f"data.x{n}").write_text("x")  # "no parser for .xN": 30 kinds
    assert run(cli, "index", str(corpus))[0] == 0
    code, _, err = run(cli, "index", str(corpus))
    assert code == 0 and "0 added, 0 updated, 0 removed, 8 unchanged" in err
    flat = " ".join(err.split())
    assert "30 skipped: no parser for .x0 (1)," in flat and "and 26 more kinds" in flat, flat
    assert "data.x0" not in err
    said = [line for line in err.splitlines() if not line.startswith("    ")]  # not a wrapped rest
    assert len(said) == 3 and said[2].startswith("30 skipped: "), err
    code, _, err = run(cli, "index", str(corpus), "--skipped")
    assert all(f"data.x{n}" in err for n in range(30))


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_index_names_the_corpus_commit_and_warns_when_dirty(cli: CliRunner, corpus: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
            cwd=corpus, env=env, check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip

    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "corpus")
    head = git("rev-parse", "HEAD")
    code, _, err = run(cli, "index", str(corpus))
    assert code == 0 and f"corpus at git commit {head[:12]}" in err and "uncommitted" not in err
    (corpus / "runbooks" / "deploy.md").write_text("# Deploy\n\nchanged, not committed\n", encoding="utf-8")
    code, _, err = run(cli, "index", str(corpus))
    assert code == 0 and "1 updated" in err
    assert f"corpus at git commit {head[:12]} with uncommitted changes" in " ".join(err.split())
    code, out, _ = run(cli, "status")
    assert code == 0 and f"{head[:7]} dirty" in out


def _flat(text: str) -> str:
    """``text`` without white space: a path wrapped over lines reads whole."""
    return re.sub(r"\s+", "", text)


def test_status_is_one_line_per_collection(cli: CliRunner, corpus: Path, tmp_path: Path) -> None:
    _break(corpus)
    assert run(cli, "index", str(corpus))[0] == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    (other / "b.md").write_text("# B\n\nbeta\n", encoding="utf-8")
    assert run(cli, "index", str(other), "-c", "work")[0] == 0
    (other / "b.md").write_text("# B\n\nbeta, edited after indexing\n", encoding="utf-8")

    code, out, _ = run(cli, "status", "--json")
    full = json.loads(out)
    counts = {c["name"]: (c["documents"], c["chunks"]) for c in full["collections"]}
    code, out, _ = run(cli, "status")
    assert code == 0
    lines = out.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("collection"))
    # a long path (a deeper temp folder, as pytest-xdist's) wraps at 80 columns: paths are read unwrapped
    head = "\n".join(lines[:top])
    assert "hash-64" in head and _flat(str(full["data_dir"])) in _flat(head)
    header = ["collection", "documents", "chunks", "vectors", "last", "build", "commit", "stale", "skipped"]
    assert lines[top].split() == header
    rows = {line.split()[0]: line.split() for line in lines[top + 1 : top + 3]}
    assert rows["samples"][1:4] == [*map(str, counts["samples"]), "100%"]
    assert rows["samples"][-2:] == ["0", "6"]
    assert rows["work"][1:3] == [str(n) for n in counts["work"]] and rows["work"][-2:] == ["1", "0"]
    assert "just now" in lines[top + 1]
    assert any("on disk since indexed: 1 changed" in line for line in lines)
    assert "bad-0.md" not in out and str(other) not in out  # details only on request
    assert max(cell_len(line) for line in lines) <= 80

    code, out, _ = run(cli, "status", "--roots", "--settings", "--stale")
    assert code == 0
    assert _flat(f"root {other.resolve()}") in _flat(out) and _flat(f"root {corpus.resolve()}") in _flat(out)
    assert "chunk: max_tokens = 200" in out  # the corpus's docshelf.toml, recorded with the collection
    assert "work: b.md" in out


def test_small_formatters() -> None:
    assert [ago(None), ago(100.0, 130.0), ago(0.0, 600.0), ago(0.0, 7300.0), ago(0.0, 3 * 86400.0)] == [
        "never", "just now", "10 min ago", "2 h ago", "3 days ago",
    ]  # fmt: skip
    assert [size(512), size(163382), size(5 * 1024**3)] == ["512 B", "159.6 KB", "5.0 GB"]
