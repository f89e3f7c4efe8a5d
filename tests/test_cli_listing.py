"""`docshelf ls`, an unknown collection named with the ones there are, ten hits and more numbered
in one column, and `show` and `watch` lines that fit 80 columns (real store, hash embedder)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from clikit import run, runner


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    return runner(monkeypatch, tmp_path / "data")


def test_ls_lists_a_collections_documents(cli: CliRunner, corpus: Path, tmp_path: Path) -> None:
    assert run(cli, "index", str(corpus))[0] == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "extra.md").write_text("# Extra\n\nOne more.\n", encoding="utf-8")
    assert run(cli, "index", str(other), "-c", "other")[0] == 0

    code, out, err = run(cli, "ls", "-c", "samples")
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header.split() == ["path", "type", "size", "indexed", "title"]
    assert max(cell_len(line) for line in out.splitlines()) <= 80
    assert [r.split()[0] for r in rows] == sorted(r.split()[0] for r in rows)
    assert len(rows) == 8 and any(r.startswith("notes/数据备份策略.md ") and "markdown" in r for r in rows)
    assert "extra.md" not in out and "samples" not in out

    code, out, _ = run(cli, "ls", "-c", "samples", "--json")
    listed = json.loads(out)
    assert code == 0 and listed["total"] == 8
    doc = {d["path"]: d for d in listed["documents"]}["runbooks/deploy.md"]
    assert doc["file_type"] == "markdown" and doc["title"] == "Deploy guide" and doc["size"] > 0
    assert doc["indexed_at"] and doc["uri"] == "docshelf://samples/runbooks/deploy.md"

    # every collection, each line naming its own; a glob, a folder
    code, out, _ = run(cli, "ls")
    assert code == 0 and out.splitlines()[0].split()[:2] == ["collection", "path"]
    assert any(line.split()[:2] == ["other", "extra.md"] for line in out.splitlines())
    code, out, _ = run(cli, "ls", "runbooks/*.md", "--json")
    assert sorted(d["path"] for d in json.loads(out)["documents"]) == [
        "runbooks/deploy-old.md", "runbooks/deploy.md", "runbooks/incident-response.md",
    ]  # fmt: skip
    code, out, _ = run(cli, "ls", "runbooks/", "--json")
    assert code == 0 and json.loads(out)["total"] == 3

    code, out, err = run(cli, "ls", "nothing/*")
    assert code == 1 and out == "" and "no document matches" in err
    code, _, err = run(cli, "ls", "-c", "nosuch")
    assert code == 7 and err.splitlines() == ["error: no collection 'nosuch'; the index has other, samples"]


def test_search_in_an_unknown_collection_names_the_ones_there_are(cli: CliRunner, corpus: Path) -> None:
    """It said "no results: collection(s) nosuch hold no documents", exit 1."""
    assert run(cli, "index", str(corpus))[0] == 0
    code, out, err = run(cli, "search", "deploy", "-c", "nosuch")
    assert code == 7 and out == ""
    assert err.splitlines() == ["error: no collection 'nosuch'; the index has samples"]
    code, _, err = run(cli, "ask", "how do we deploy?", "-c", "nosuch")
    assert code == 7 and "the index has samples" in err


def test_ten_hits_and_more_are_numbered_in_one_column(cli: CliRunner, tmp_path: Path) -> None:
    """Hit 10 printed `10.runbook.md` (the number took the blank before the path)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(12):
        (notes / f"n{i:02d}.md").write_text(f"# Note {i}\n\nThe zebra count is {i}.\n", encoding="utf-8")
    assert run(cli, "index", str(notes))[0] == 0
    code, out, err = run(cli, "search", "zebra", "-k", "12", "--mode", "keyword")
    assert code == 0, err
    numbered = [line for line in out.splitlines()[1:] if line[:1].isdigit()]  # past "12 hits (...)"
    assert len(numbered) == 12
    assert [line.split(".")[0] for line in numbered] == [str(n) for n in range(1, 13)]
    assert all(line[4:5] == "n" for line in numbered), numbered  # every path starts in column 5
    assert numbered[9].startswith("10. n") and numbered[0].startswith("1.  n")
    snippet_lines = [line for line in out.splitlines() if "zebra" in line.lower() and not line[:1].isdigit()]
    assert snippet_lines and all(line.startswith("    ") for line in snippet_lines)


def test_show_fits_80_columns(cli: CliRunner, tmp_path: Path) -> None:
    """Its passages were printed line by line as stored: a long line ran past the terminal."""
    notes = tmp_path / "notes"
    notes.mkdir()
    long_line = " ".join(f"word{i}" for i in range(60))
    (notes / "long.md").write_text(f"# Long\n\n{long_line}\n\n    indented code line\n", encoding="utf-8")
    assert run(cli, "index", str(notes))[0] == 0
    code, out, _ = run(cli, "search", "word17", "--json")
    chunk_id = json.loads(out)["hits"][0]["chunk_id"]
    code, out, err = run(cli, "show", chunk_id, "-A", "1", "-B", "1")
    assert code == 0, err
    lines = out.splitlines()
    assert max(cell_len(line) for line in lines) <= 80
    assert " ".join(" ".join(lines).split()).count("word59") == 1 and "word0 " in out
    assert any(line.startswith("       indented code line") for line in lines)  # its own indent kept


def test_watch_lines_fit_80_columns(tmp_path: Path) -> None:
    """`watching /a/long/path (debounce ...); Ctrl-C to stop` ran past the terminal."""
    notes = tmp_path / ("a-folder-with-a-name-long-enough-to-fill-most-of-a-line" * 2) / "notes"
    notes.mkdir(parents=True)
    (notes / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(DOCSHELF_EMBED__MODEL="hash", COLUMNS="80", PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "docshelf", "watch", str(notes), "--data-dir", str(tmp_path / "data")]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    # a line that never comes must fail the test, not wait for ever on a watch that runs for ever
    watchdog = threading.Timer(120, proc.terminate)
    watchdog.start()
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            # read unwrapped: how the line wraps depends on the path's length (a deeper temp
            # folder, as pytest-xdist's, broke "Ctrl-C to stop" over two lines)
            if "Ctrl-C to stop" in " ".join(x.strip() for x in lines):
                break
    finally:
        watchdog.cancel()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    said = "\n".join(lines)
    unwrapped = " ".join(x.strip() for x in lines)
    assert "watching" in said and "Ctrl-C to stop" in unwrapped, said
    assert max(cell_len(line) for line in lines) <= 80, said
    assert str(notes) in "".join(line.strip() for line in lines)  # wrapped, not cut
