"""What any command line is expected to do: `--version`, shell completion, options before the
command, a mistyped option answered in one line with the near one, help that fits 80 columns, and
`install` that leaves a config it would not change alone."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.main import get_command
from typer.testing import CliRunner

import docshelf
from clikit import run, runner
from docshelf.cli import app


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    return runner(monkeypatch, tmp_path / "data")


def test_version(cli: CliRunner) -> None:
    code, out, _ = run(cli, "--version")
    assert code == 0 and out == f"docshelf {docshelf.__version__}\n"
    assert re.fullmatch(r"docshelf \d+\.\d+\.\d+\n", out)


def test_shell_completion_is_shown_installed_and_completes(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "SHELL": "/bin/bash", "COLUMNS": "80"}
    cmd = [sys.executable, "-m", "docshelf"]
    # typer finds "the current shell" among the command's parent processes (a word after the flag
    # is not read): run under a bash that stays, as from a terminal; a pytest whose shell had
    # exited failed here with "Shell  not supported."
    in_bash = ["bash", "-c", '"$@"; exit $?', "bash", *cmd]
    shown = subprocess.run([*in_bash, "--show-completion"], env=env, capture_output=True, text=True)
    assert shown.returncode == 0 and "_DOCSHELF_COMPLETE" in shown.stdout, shown.stderr
    installed = subprocess.run([*in_bash, "--install-completion"], env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    assert "docshelf" in (tmp_path / ".bashrc").read_text()
    # what bash runs on <TAB>: `docshelf sea` completes to search, `search --da` to --data-dir
    for words, cword, want in (("docshelf sea", "1", "search"), ("docshelf search --da", "2", "--data-dir")):
        tab = {**env, "_DOCSHELF_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": cword}
        done = subprocess.run(cmd, env=tab, capture_output=True, text=True)
        assert want in done.stdout.split(), (words, done.stdout, done.stderr)


def test_options_before_the_command_act_as_its_own(
    cli: CliRunner, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCSHELF_STORE__DATA_DIR")  # the data dir comes from the options here
    first, second = tmp_path / "first", tmp_path / "second"
    code, _, err = run(cli, "--data-dir", str(first), "index", str(corpus))
    assert code == 0 and (first / "docshelf.db").is_file(), err
    code, out, err = run(cli, "--data-dir", str(first), "status", "--json")
    assert code == 0 and json.loads(out)["documents"] == 8, err
    # the command's own option wins
    code, _, err = run(cli, "--data-dir", str(first), "status", "--data-dir", str(second))
    assert code == 7 and str(second) in err and not second.exists()
    # -v still works, before or beside the others
    code, out, _ = run(cli, "-v", "--data-dir", str(first), "status", "--json")
    assert code == 0 and json.loads(out)["documents"] == 8
    points_first = tmp_path / "first.toml"
    points_first.write_text(f'[store]\ndata_dir = "{first}"\n', encoding="utf-8")
    points_second = tmp_path / "second.toml"
    points_second.write_text(f'[store]\ndata_dir = "{second}"\n', encoding="utf-8")
    code, out, err = run(cli, "--config", str(points_first), "search", "deploy", "--json")
    assert code == 0 and json.loads(out)["hits"], err
    code, _, err = run(cli, "--config", str(points_first), "search", "deploy", "--config", str(points_second))
    assert code == 7 and str(second) in err


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["search", "x", "--dat-dir", "d"],
         "error: no such option --dat-dir; did you mean --data-dir? (see docshelf search --help)"),
        (["--dat-dir", "d", "status"],
         "error: no such option --dat-dir; did you mean --data-dir? (see docshelf --help)"),
        (["serch", "x"], "error: no such command serch; did you mean search? (see docshelf --help)"),
        (["search"], "error: missing argument QUERY (see docshelf search --help)"),
        (["migrate"], "error: missing option --to (see docshelf migrate --help)"),
        (["status", "--bogus"], "error: no such option --bogus (see docshelf status --help)"),
    ],
)  # fmt: skip
def test_a_usage_error_is_one_plain_line(cli: CliRunner, args: list[str], line: str) -> None:
    """typer drew a usage line, a hint and a boxed panel, and said "Possible options"."""
    code, out, err = run(cli, *args)
    assert code == 2 and out == ""
    assert err.splitlines() == [line]


@pytest.mark.parametrize("args", [["-k", "0"], ["-n", "1001"], ["--limit", "-3"]])
def test_a_bad_value_is_one_line_too(cli: CliRunner, args: list[str]) -> None:
    code, _, err = run(cli, "search", "x", *args)
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("error: invalid value for --k")
    assert "not in the range 1-1000" in err  # the help says "(1-1000)" in words, not "[1<=x<=1000]"
    assert "docshelf search --help" in err and "╭" not in err


def _commands() -> list[list[str]]:
    group = get_command(app)
    return [[], *([name] for name in group.list_commands(None))]  # type: ignore[attr-defined, arg-type]


@pytest.mark.parametrize("command", _commands(), ids=lambda c: " ".join(c) or "docshelf")
def test_help_fits_80_columns_with_whole_option_names(
    cli: CliRunner, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """`search --help` cut `--include-superseded` to `--include-super…` and showed `<list[str]>`."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(cli, *command, "--help")
    assert code == 0, err
    lines = out.splitlines()
    assert lines and max(cell_len(line) for line in lines) <= 80
    assert "…" not in out
    assert not re.search(r"<[a-zA-Z][\w\[\], ]*>", out), "a Python type in the help"
    target = get_command(app)
    if command:
        target = target.commands[command[0]]  # type: ignore[attr-defined]
    names = [o for p in target.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")]
    assert names, command
    for option in names:
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", out), option


@pytest.mark.parametrize("command", _commands(), ids=lambda c: " ".join(c) or "docshelf")
def test_help_prose_is_wrapped_at_the_terminal_not_at_the_source(
    cli: CliRunner, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """`index --help` broke its text where the docstring's lines end, then again at 80 columns:
    "the vectors for" alone on a line, the rest of the sentence below it."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(cli, *command, "--help")
    assert code == 0, err
    prose = out.split("╭")[0].splitlines()[2:]  # the text between the usage line and the first panel
    for line, after in itertools.pairwise(prose):
        if line.strip() and after.strip():
            room = 80 - 1 - cell_len(line.rstrip())  # the panel's margin: 1 column on the right
            assert cell_len(after.split()[0]) + 1 > room, f"broken early: {line.strip()!r}"


def test_install_backs_up_only_a_file_it_changes(cli: CliRunner, tmp_path: Path) -> None:
    """Each re-run of `install` with the same entry left one more identical .bak."""
    target = tmp_path / "mcp.json"
    target.write_text('{"mcpServers": {"other": {"command": "x"}}}\n', encoding="utf-8")
    code, _, err = run(cli, "install", "cursor", "--file", str(target))
    assert code == 0 and "old file kept as" in err, err
    written = target.read_text(encoding="utf-8")
    backups = sorted(tmp_path.glob("mcp.json.*.bak"))
    assert len(backups) == 1
    code, _, err = run(cli, "install", "cursor", "--file", str(target))
    assert code == 0 and "already" in err and "old file kept" not in err, err
    assert sorted(tmp_path.glob("mcp.json.*.bak")) == backups
    assert target.read_text(encoding="utf-8") == written
    code, _, err = run(cli, "install", "cursor", "--file", str(target), "--read-only")
    assert code == 0 and "old file kept as" in err  # a changed entry: backed up again
    assert len(list(tmp_path.glob("mcp.json.*.bak"))) == 2


@pytest.fixture(scope="module")
def piped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An index of two notes (one long) and the environment that searches it without a helper."""
    root = tmp_path_factory.mktemp("piped")
    notes = root / "notes"
    notes.mkdir()
    (notes / "paging.md").write_text("# Paging\n\nPage the on-call engineer for a SEV-1 incident.\n")
    long = "".join(f"Line {i}: the incident log grows, entry after entry.\n\n" for i in range(4000))
    (notes / "log.md").write_text(f"# Incident log\n\n{long}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(DOCSHELF_EMBED__MODEL="hash", DOCSHELF_STORE__DATA_DIR=str(root / "data"),
               DOCSHELF_SEARCH__HELPER="off", HOME=str(root), COLUMNS="80")  # fmt: skip
    subprocess.run([sys.executable, "-m", "docshelf", "index", str(notes)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    return env


@pytest.mark.parametrize(
    "args",
    [
        ["search", "incident"],  # answered without typer (cli/direct.py)
        ["search", "incident", "--json"],
        ["-v", "search", "incident", "--mode", "keyword"],  # through typer
        ["ls"], ["ls", "--json"], ["status"], ["status", "--json"], ["grep", "incident"],
        ["grep", "incident", "--json"], ["read", "log.md"], ["read", "log.md", "--json"],
        ["--help"], ["search", "--help"], ["--version"],
    ],
)  # fmt: skip
def test_output_to_a_reader_that_has_gone_ends_quietly_as_unix_tools_do(
    piped: dict[str, str], args: list[str]
) -> None:
    """`docshelf ... | head -1`: once the reader has gone, the command stops without a word and exits
    141 (128 + SIGPIPE), as cat, grep and git do. It exited 1 (the code of "no results"), or said
    "error: [Errno 32] Broken pipe; check free disk space ..." and exited 5 (a store problem)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # a reader that has gone before the first byte
    try:
        done = subprocess.run([sys.executable, "-m", "docshelf", *args], env=piped, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120)  # fmt: skip
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert "error" not in done.stderr and "Traceback" not in done.stderr and "Exception" not in done.stderr


def test_a_reader_leaving_half_way_through_a_long_answer_ends_it_alike(piped: dict[str, str]) -> None:
    """What `| head -1` does: the reader takes the first line of ~200 KB (more than a pipe holds)
    and goes. (Not under PYTHONUNBUFFERED: Python then writes stdout unbuffered, and a write the
    reader leaves half way returns short, its rest unwritten and no error raised.)"""
    env = {k: v for k, v in piped.items() if k != "PYTHONUNBUFFERED"}
    for args in (["read", "log.md"], ["read", "log.md", "--json"], ["read", "log.md", "-n"]):
        proc = subprocess.Popen([sys.executable, "-m", "docshelf", *args], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        assert proc.stdout is not None and proc.stdout.readline()
        proc.stdout.close()
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 141, (args, stderr)
        assert "rror" not in stderr and "Traceback" not in stderr, args


def test_a_query_of_a_dash_is_read_from_stdin(piped: dict[str, str], cli: CliRunner, corpus: Path) -> None:
    """`git diff | docshelf search -`, `docshelf search - < question.txt`: "-" was searched as a word
    ("no results: the query has no searchable words")."""

    def search(given: str, *more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "docshelf", "search", "-", *more], env=piped,
                              input=given, capture_output=True, text=True, timeout=120)  # fmt: skip

    done = search("who do we page\nfor a SEV-1?\n")
    assert done.returncode == 0 and done.stdout.splitlines()[2].split()[1].startswith("paging.md:"), (
        done.stderr
    )
    as_json = json.loads(search("who do we page for a SEV-1?", "--json").stdout)
    assert as_json["query"] == "who do we page for a SEV-1?" and as_json["hits"][0]["path"] == "paging.md"
    for nothing in ("", " \n\n"):
        empty = search(nothing)
        assert empty.returncode == 2 and empty.stdout == "", empty.stderr
        assert empty.stderr.count("\n") == 1 and "stdin" in empty.stderr, empty.stderr
    # the typer command (options it alone reads) takes it alike
    assert run(cli, "index", str(corpus))[0] == 0
    result = cli.invoke(app, ["search", "-", "--mode", "keyword"], input="Urlaubstage verfallen")
    assert result.exit_code == 0 and "urlaubsregelung.md" in result.stdout, result.stderr
