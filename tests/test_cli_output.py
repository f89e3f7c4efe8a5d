"""`docshelf search` for people: one block per hit at 80 columns, document text never markup,
control characters visible (real store, hash embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from clikit import run, runner
from docshelf.cli.output import print_json, visible

ESC = "\x1b"


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    return runner(monkeypatch, tmp_path / "data")


def _words(text: str) -> str:
    return " ".join(text.replace("**", "").replace("…", "").split())


def _glued(text: str) -> str:
    """Without any whitespace: wrapping may break CJK text anywhere, Latin text only at spaces."""
    return "".join(_words(text).split())


def test_search_at_80_columns_shows_every_citation_and_snippet(cli: CliRunner, corpus: Path) -> None:
    assert run(cli, "index", str(corpus))[0] == 0
    query = "how do we page someone for a sev-1"
    code, out, _ = run(cli, "search", query, "-k", "10", "--json")
    hits = json.loads(out)["hits"]
    assert code == 0 and len(hits) >= 5
    code, out, err = run(cli, "search", query, "-k", "10")
    assert code == 0, err
    lines = out.splitlines()
    assert max(cell_len(line) for line in lines) <= 80
    assert all(line == line.rstrip() for line in lines)  # no padding: clean in a pipe
    flat = _glued(out)
    for n, hit in enumerate(hits, 1):
        # the citation line is whole, on its own line, numbered
        assert any(line.startswith(f"{n}.") and hit["citation"] in line for line in lines), hit["citation"]
        assert _glued(" ".join(_words(hit["snippet"]).split()[:4])) in flat
        if hit["heading_path"]:
            assert _glued(" › ".join(hit["heading_path"])) in flat
    # a calibrated confidence instead of raw fused z-scores
    assert f"{hits[0]['score']:.3f}" not in out
    assert f"confidence {hits[0]['confidence']:.2f}" in lines[2]
    # one collection searched: its name is not repeated on every hit
    assert "samples" not in lines[2]


def test_collection_shown_when_several_are_searched(cli: CliRunner, corpus: Path) -> None:
    assert run(cli, "index", str(corpus), "-c", "first")[0] == 0
    other = corpus.parent / "other"
    other.mkdir()
    (other / "sev.md").write_text("# Paging\n\nPage someone for a SEV-1 with the pager.\n", encoding="utf-8")
    assert run(cli, "index", str(other), "-c", "second")[0] == 0
    code, out, _ = run(cli, "search", "page someone for a sev-1", "--mode", "keyword")
    heads = [line for line in out.splitlines() if line[:1].isdigit()]
    assert code == 0 and heads
    assert any("first" in h for h in heads) and any("second" in h for h in heads)
    code, out, _ = run(cli, "search", "page someone for a sev-1", "--mode", "keyword", "-c", "first")
    heads = [line for line in out.splitlines() if line[:1].isdigit()]
    assert code == 0 and heads and not any("first" in h for h in heads)


def test_document_text_is_never_markup(cli: CliRunner, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "paths.py").write_text(
        'SEP = r"[/\\\\]"  # separators\n'
        "LINK = '[link=https://evil.example]click here[/link] and [bold red]alarm[/]'\n",
        encoding="utf-8",
    )
    (docs / "[red]plan v2.md").write_text("# Plan\n\nseparators of the plan\n", encoding="utf-8")
    code, _, err = run(cli, "index", str(docs))
    assert code == 0 and "2 added" in err
    for mode in ("keyword", "hybrid"):
        code, out, err = run(cli, "search", "separators click alarm", "--mode", mode)
        assert code == 0, err  # was rich.errors.MarkupError
        assert "MarkupError" not in err and "Traceback" not in err
        flat = out.replace("\n", " ")
        assert '[/\\\\]"' in flat
        assert "[link=https://evil.example]click" in flat and "[bold red]alarm[/]" in flat
        assert "[red]plan v2.md:" in flat
    code, out, _ = run(cli, "read", "paths.py")
    assert code == 0 and "[link=https://evil.example]" in out and 'r"[/\\\\]"' in out


def test_control_characters_from_documents_and_file_names_are_visible(cli: CliRunner, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    hostile = (
        "# Escapes\n\nclear\x1b[2J\x1b[H screen, clipboard \x1b]52;c;ZXZpbA==\x07 set, "
        "bell\x07 and \x9b31m eight-bit CSI, reversed \u202etxt.exe\n"
    )
    (docs / "escapes.md").write_text(hostile, encoding="utf-8")
    (docs / f"name{ESC}[31mred.md").write_text("# Red\n\nclipboard in the name\n", encoding="utf-8")
    code, _, err = run(cli, "index", str(docs))
    assert code == 0 and ESC not in err
    outputs = [run(cli, "search", "clipboard screen", "--mode", "keyword"), run(cli, "read", "escapes.md")]
    code, out, _ = run(cli, "search", "clipboard screen", "--mode", "keyword", "--json")
    hit = next(h for h in json.loads(out)["hits"] if h["path"] == "escapes.md")
    assert ESC in hit["snippet"]  # --json keeps the exact text (JSON-escaped)
    outputs.append(run(cli, "show", hit["chunk_id"]))
    outputs.append(run(cli, "status", "--all"))
    for code, out, err in outputs:
        assert code == 0, err
        for raw in (ESC, "\x07", "\x9b", "\u202e"):
            assert raw not in out and raw not in err
    search_out, read_out = outputs[0][1], outputs[1][1]
    assert "␛[2J" in search_out and "␛]52;c;ZXZpbA==␇" in search_out
    assert "name␛[31mred.md" in search_out
    assert "\\x9b31m" in read_out and "\\u202etxt.exe" in read_out


def test_visible_keeps_text_and_json_stays_exact(capsys: pytest.CaptureFixture[str]) -> None:
    assert visible("tab\tand\nnewline, ünïcödé, 中文") == "tab\tand\nnewline, ünïcödé, 中文"
    assert visible("a\r\nb\rc\x00\x7f") == "a\nb\nc␀␡"  # a lone CR ends a line (old Mac files)
    print_json({"text": "\x1b[2J \x9b \u202e ok"})
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\x9b" not in printed and "\u202e" not in printed
    assert json.loads(printed)["text"] == "\x1b[2J \x9b \u202e ok"


def test_install_hints_keep_their_brackets(
    cli: CliRunner, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    if importlib.util.find_spec("sentence_transformers") is not None:
        pytest.skip("sentence-transformers is installed: no hint to print")
    assert run(cli, "index", str(corpus))[0] == 0
    monkeypatch.setenv("DOCSHELF_RERANK__MODEL", "st:some-cross-encoder")
    code, _, err = run(cli, "search", "deploy", "--rerank")
    assert code != 0 and "pip install 'docshelf[st]'" in err, err

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gdown" else real(name, *a)
    )
    code, out, _ = run(cli, "doctor")
    assert code == 0 and "'docshelf[drive]'" in out.replace("\n", " ")


def test_an_interrupted_command_says_what_was_kept_only_where_something_was_indexed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Ctrl-C in `docshelf search` or `serve` said "what was indexed so far is kept": only `index`
    and `watch` index anything."""
    import typer

    from docshelf.cli.common import handle_errors

    def interrupted() -> None:
        raise KeyboardInterrupt

    for name, kept in (("search", False), ("serve", False), ("index", True), ("watch", True)):
        interrupted.__name__ = name
        with pytest.raises(typer.Exit) as exit_:
            handle_errors(interrupted)()
        said = capsys.readouterr().err
        assert exit_.value.exit_code == 130 and "interrupted" in said
        assert ("indexed so far is kept" in said) is kept, (name, said)
