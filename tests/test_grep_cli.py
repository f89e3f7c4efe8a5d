"""`docshelf grep` behaves as grep -rn: PATH:LINE:TEXT, -l, -c, -i, -w, -E, -C, --json, and exit 0 on
a match, 1 on none, 2 on an error; a PDF's lines are PDF#page=N:LINE, the line within the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clikit import run, runner
from test_formats import make_pdf


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Title\n\nalpha ERR_X beta\nnothing\nmore err_x here\tand a tab\n")
    (docs / "b.md").write_text("# B\n\nERR_XY is another code\n")
    (docs / "c.md").write_text("# C\n\nno code at all\n")
    (docs / "spec.pdf").write_bytes(make_pdf([["page one text"], ["first", "ERR_X in the spec"]]))
    cli = runner(monkeypatch, tmp_path / "data")
    assert run(cli, "index", str(docs))[0] == 0
    return cli


def test_lines_files_and_counts_as_grep(cli: CliRunner) -> None:
    code, out, _ = run(cli, "grep", "ERR_X")
    assert code == 0
    assert out.splitlines() == [
        "a.md:3:alpha ERR_X beta",
        "b.md:3:ERR_XY is another code",
        "spec.pdf#page=2:2:ERR_X in the spec",
    ]
    code, out, _ = run(cli, "grep", "-i", "err_x")
    assert "a.md:5:more err_x here\tand a tab" in out.splitlines()  # a tab stays a tab in a pipe
    assert run(cli, "grep", "-c", "-i", "err_x")[1].splitlines() == ["a.md:2", "b.md:1", "spec.pdf:1"]
    assert run(cli, "grep", "-l", "-w", "ERR_X")[1].splitlines() == ["a.md", "spec.pdf"]
    assert run(cli, "grep", "-E", r"ERR_X\b", "--path", "*.md")[1].splitlines() == ["a.md:3:alpha ERR_X beta"]
    code, out, _ = run(cli, "grep", "-C", "1", "nothing")
    assert out.splitlines() == [
        "a.md-3-alpha ERR_X beta",
        "a.md:4:nothing",
        "a.md-5-more err_x here\tand a tab",
    ]


def test_exit_codes_and_json(cli: CliRunner) -> None:
    code, out, err = run(cli, "grep", "no such words")
    assert (code, out) == (1, "")
    code, out, err = run(cli, "grep", "-E", r"(a)\1")
    assert code == 2 and out == "" and "back-references" in err and len(err.strip().splitlines()) == 1
    assert run(cli, "grep", "-E", "-F", "x")[0] == 2  # a usage error, as grep's
    code, out, _ = run(cli, "grep", "--json", "ERR_XY")
    payload = json.loads(out)
    assert code == 0 and [m["citation"] for m in payload["matches"]] == ["b.md:3"]
    assert payload["counts"] == [{"collection": "default", "path": "b.md", "lines": 1}]
