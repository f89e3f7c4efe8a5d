"""`docshelf show CHUNK_ID` and `docshelf read PATH[:LINES|#page=N]` (real store, hash embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from clikit import run, runner
from docshelf.cli.read import Location, parse_location

INCIDENT = "runbooks/incident-response.md"


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, corpus: Path) -> CliRunner:
    cli = runner(monkeypatch, tmp_path / "data")
    assert run(cli, "index", str(corpus))[0] == 0
    return cli


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("notes/a.md", Location("notes/a.md")),
        ("notes/a.md:7", Location("notes/a.md", (7, 7))),
        ("notes/a.md:7-12", Location("notes/a.md", (7, 12))),
        ("notes/a.md:7-", Location("notes/a.md", (7, None))),
        ("report.pdf#page=3", Location("report.pdf", page=3)),
        ("deck.pptx:3-9 (page 2)", Location("deck.pptx", (3, 9))),  # a citation as search prints it
        ("odd:name.md:2-3", Location("odd:name.md", (2, 3))),
        ("docshelf://samples/notes/a.md:1-2", Location("docshelf://samples/notes/a.md", (1, 2))),
        # GitHub's line anchors, as agents often write a citation
        ("notes/a.md#L7", Location("notes/a.md", (7, 7))),
        ("notes/a.md#L7-L12", Location("notes/a.md", (7, 12))),
        ("notes/a.md#L7-12", Location("notes/a.md", (7, 12))),
    ],
)
def test_parse_location(spec: str, expected: Location) -> None:
    assert parse_location(spec) == expected


def test_read_lines_as_the_file_has_them(cli: CliRunner, corpus: Path) -> None:
    lines = (corpus / INCIDENT).read_text(encoding="utf-8").splitlines()
    code, out, err = run(cli, "read", f"{INCIDENT}:18-22")
    assert code == 0, err
    assert out.splitlines() == lines[17:22]  # a pipe gets the text itself
    assert f"{INCIDENT}:18-22" in err  # the citation goes to stderr
    code, out, _ = run(cli, "read", f"{INCIDENT}:18-22", "-C", "2", "--numbers")
    assert code == 0
    rows = [row.split(" │", 1) for row in out.splitlines()]
    assert max(cell_len(row) for row in out.splitlines()) <= 80
    numbers = [n.strip() for n, _ in rows if n.strip()]
    assert numbers == [str(n) for n in range(16, 25)]
    by_line: dict[int, list[str]] = {}
    for n, text in rows:  # a long line wraps under its text, its number shown once
        key = int(n) if n.strip() else max(by_line)
        by_line.setdefault(key, []).append(text.strip())
    assert " ".join(by_line[20]) == " ".join(lines[19].split())
    code, out, _ = run(cli, "read", str((corpus / INCIDENT).resolve()) + ":20", "--json")
    got = json.loads(out)
    assert code == 0 and got["text"] == lines[19] + "\n" and got["citation"] == f"{INCIDENT}:20-20"
    assert got["total_lines"] == len(lines) and "not instructions" in got["untrusted_content"]
    code, out, _ = run(cli, "read", INCIDENT)
    assert code == 0 and out.splitlines() == lines


def test_old_mac_line_ends_are_lines_and_a_line_break_in_a_name_is_shown(
    cli: CliRunner, corpus: Path
) -> None:
    """A CR-only file printed as one line with ␍ symbols; a file name holding a newline split its
    citation over two lines."""
    (corpus / "notes" / "mac.txt").write_bytes(b"one\rtwo\rthree\r")
    (corpus / "notes" / "two\nlines.md").write_text("# Odd\n\nflamingo\n", encoding="utf-8")
    assert run(cli, "index", str(corpus))[0] == 0
    code, out, _ = run(cli, "read", "notes/mac.txt:2-3")
    assert code == 0 and out == "two\nthree\n"
    code, out, _ = run(cli, "read", "notes/mac.txt", "--numbers")
    assert code == 0 and [r.split("│")[1].strip() for r in out.splitlines()] == ["one", "two", "three"]
    code, out, _ = run(cli, "search", "flamingo", "--mode", "keyword")
    assert code == 0 and "notes/two\u240alines.md:1-3" in out


def test_a_pipe_gets_tabs_as_tabs(cli: CliRunner, corpus: Path, tmp_path: Path) -> None:
    """`docshelf read PATH:N-M > excerpt` turned each tab into spaces (rich expands tabs), so the
    excerpt was not "exactly those lines" of a Makefile or a TSV."""
    import os
    import subprocess
    import sys

    rows = ["name\tdays\tcity", "alpha\t3\tOslo", "\tindented\tby a tab", "mixed \t\t end", "last"]
    (corpus / "notes" / "table.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert run(cli, "index", str(corpus))[0] == 0
    env = {**os.environ, "DOCSHELF_EMBED__MODEL": "hash", "DOCSHELF_STORE__DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-m", "docshelf", "read", "notes/table.txt:2-4"],
        env=env, capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("\n".join(rows[1:4]) + "\n").encode("utf-8")
    assert b"notes/table.txt:2-4" in done.stderr


def test_a_cited_range_reads_the_same_lines_once_the_file_is_gone(cli: CliRunner, corpus: Path) -> None:
    """Rebuilt from the chunks, the gaps between them (blank lines, front matter) became spaces:
    the line breaks went, `read deploy.md:9-11` printed another line, "lines 9-9 of 9"."""
    path = corpus / "runbooks" / "deploy.md"
    lines = path.read_text(encoding="utf-8").splitlines()
    code, cited, _ = run(cli, "read", "runbooks/deploy.md:9-11")
    assert code == 0 and cited.splitlines() == lines[8:11]
    path.unlink()
    code, out, err = run(cli, "read", "runbooks/deploy.md:9-11")
    assert code == 0 and "from the index" in err
    assert out == cited and "runbooks/deploy.md:9-11" in err
    code, out, _ = run(cli, "read", "runbooks/deploy.md", "--json")
    got = json.loads(out)
    rebuilt = got["text"].splitlines()
    assert got["source"] == "index" and len(rebuilt) == len(lines)
    # every line as the file had it, but what no chunk holds (the front matter) left blank
    assert all(row == lines[i] or not row.strip() for i, row in enumerate(rebuilt))
    assert sum(row == lines[i] for i, row in enumerate(rebuilt)) >= len(lines) - 5


def test_read_errors_are_one_line(cli: CliRunner) -> None:
    code, _, err = run(cli, "read", "nope.md:3")
    assert code == 7 and "no document 'nope.md'" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(cli, "read", f"{INCIDENT}:900")
    assert code == 2 and "start line 900 is past the end" in err and "Traceback" not in err
    code, _, err = run(cli, "read", f"{INCIDENT}:9-3")
    assert code == 2 and "N <= M" in err


def test_show_a_hit_in_context(cli: CliRunner) -> None:
    code, out, _ = run(cli, "search", "page someone for a sev-1", "--mode", "keyword", "--json")
    hit = json.loads(out)["hits"][0]
    assert code == 0 and hit["path"] == INCIDENT
    code, out, _ = run(cli, "show", hit["chunk_id"], "--before", "1", "--after", "1", "--json")
    window = json.loads(out)
    assert code == 0 and window["path"] == INCIDENT
    targets = [p for p in window["passages"] if p["is_target"]]
    assert len(window["passages"]) == 3 and [p["chunk_id"] for p in targets] == [hit["chunk_id"]]
    assert window["passages"][0]["line_end"] < targets[0]["line_start"]

    code, out, _ = run(cli, "show", hit["chunk_id"], "-B", "1", "-A", "1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(INCIDENT)
    marked = [line for line in lines if line.startswith("▶")]
    assert marked == [f"▶  {hit['citation']}"]
    for p in window["passages"]:
        assert any(p["citation"] in line for line in lines)
        # long lines wrap under themselves at 80 columns
        assert " ".join(p["text"].split("\n")[-1].split()) in " ".join(out.split())

    code, out, _ = run(cli, "search", "page someone for a sev-1", "--mode", "keyword", "--ids", "-k", "1")
    assert code == 0 and f"id {hit['chunk_id']}" in out
    code, _, err = run(cli, "show", "0" * 32)
    assert code == 7 and "unknown chunk id" in err


def test_show_takes_a_citation_and_a_pdf_page(cli: CliRunner, corpus: Path) -> None:
    """`docshelf show` (and MCP read_passage) open the passage a citation names, as agents and
    people copy it from a search: `path:START-END`, GitHub's `path#LSTART`, `file.pdf#page=N`."""
    from test_formats import make_pdf

    (corpus / "report.pdf").write_bytes(make_pdf([["Quarterly uptime summary"], ["Zebra migration plan"]]))
    assert run(cli, "index", str(corpus))[0] == 0
    code, out, _ = run(cli, "search", "page someone for a sev-1", "--mode", "keyword", "--json")
    hit = json.loads(out)["hits"][0]
    for ref in (
        hit["citation"],
        f"{hit['path']}#L{hit['line_start']}",
        f"{hit['path']}:{hit['line_start'] + 1}",
    ):
        code, out, err = run(cli, "show", ref, "--json")
        assert code == 0, err
        assert [p["chunk_id"] for p in json.loads(out)["passages"]] == [hit["chunk_id"]]
    code, out, err = run(cli, "show", "report.pdf#page=2", "--json")
    assert code == 0, err
    (passage,) = json.loads(out)["passages"]
    assert passage["page"] == 2 and "Zebra migration plan" in passage["text"]
    code, _, err = run(cli, "show", "report.pdf#page=9")
    assert code == 7 and "no passage of report.pdf on page 9" in err
    code, _, err = run(cli, "show", f"{INCIDENT}:90000")
    assert code == 7 and "read_document" in err
