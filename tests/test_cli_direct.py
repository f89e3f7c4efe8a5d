"""`docshelf search` without typer (cli/direct.py): its table of options is the typer command's,
it takes only what typer would take the same way, and both paths print the same."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.main import get_command

from docshelf.cli import direct
from docshelf.cli.main import make_app
from docshelf.cli.search import _hits


def _search_params() -> list[Any]:
    group = get_command(make_app("search"))
    return list(group.commands["search"].params)  # type: ignore[attr-defined]


def _kind(param: Any) -> str:
    annotation = param.type_descriptor.annotation
    if param.multiple:
        return "many"
    if annotation is bool:
        return "flag"
    return "int" if annotation is int else "text"


def test_the_table_is_the_typer_commands_options() -> None:
    """An option added to (or changed in) the typer command and not here would be refused by this
    reader (or read otherwise): every spelling, kind, range and default must match."""
    params = _search_params()
    assert [p.name for p in params if p.param_type_name == "argument"] == ["query"]
    options = [p for p in params if p.param_type_name == "option"]
    spelled: dict[str, tuple[str, str]] = {}
    for p in options:
        kind = _kind(p)
        spelled |= {o: (p.name, kind) for o in p.opts}
        spelled |= {o: (p.name, "off") for o in p.secondary_opts}
        assert direct._DEFAULTS[p.name] == p.default, p.name
        if kind == "int":  # checked by the command's callback (a range type widens the help)
            low, high = direct.K_RANGE
            assert p.callback is not None and _hits(low) == low and _hits(high) == high
            for wrong in (low - 1, high + 1):
                with pytest.raises(typer.BadParameter):
                    _hits(wrong)
    assert spelled == direct.OPTIONS
    paths = {p.name for p in options if p.type_descriptor.annotation is Path}
    assert paths == set(direct.PATHS)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["a b"], {"query": "a b"}),
        (["q", "-k5", "--mode=keyword"], {"k": 5, "mode": "keyword"}),
        (["q", "-n", "3"], {"k": 3}),  # qmd's and llm's spelling
        (["q", "--limit=4"], {"k": 4}),
        (["--k", "7", "q", "-c", "x", "--collection=y", "-cz"], {"k": 7, "collection": ["x", "y", "z"]}),
        (["q", "--no-rerank", "--json", "--ids"], {"rerank": False, "as_json": True, "ids": True}),
        (
            ["q", "--rerank", "--type", "pdf", "--tag", "t"],
            {"rerank": True, "file_type": ["pdf"], "tag": ["t"]},
        ),
        (["--", "-not-an-option"], {"query": "-not-an-option"}),
        (["q", "--data-dir", "d", "--config", "c.toml"], {"data_dir": Path("d"), "config": Path("c.toml")}),
        (["q", "--mode", "semantic", "--mode", "hybrid"], {"mode": "hybrid"}),  # the last one wins
    ],
)
def test_what_it_reads(args: list[str], expected: dict[str, Any]) -> None:
    parsed = direct.parse(args)
    assert parsed is not None
    assert {k: parsed[k] for k in expected} == expected


@pytest.mark.parametrize(
    "args",
    [
        [], ["a", "b"], ["q", "--help"], ["q", "-h"], ["q", "--nope"], ["q", "-k"], ["q", "-k", "0"],
        ["q", "-k", "1001"], ["q", "-k", "+5"], ["q", "-k", " 5"], ["q", "-k=5"], ["q", "--mode", "fuzzy"],
        ["q", "--json=yes"], ["q", "--mode", "--json"], ["q", "--config", ""], ["q", "--path="],
        ["q", "--no-json"], ["--verbose", "q"],
    ],
)  # fmt: skip
def test_what_it_leaves_to_typer(args: list[str]) -> None:
    assert direct.parse(args) is None


_TOOK = re.compile(r"\((keyword|hybrid|semantic), \d+ ms\)")
_TIMES = re.compile(r'"(took_ms|index_age)": [0-9.]+')  # JSON: this run's time and the index's age


def _run(cmd: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    return proc.returncode, _TIMES.sub(r'"\1": N', _TOOK.sub(r"(\1, N ms)", proc.stdout)), proc.stderr


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("direct")
    notes = root / "notes"
    notes.mkdir()
    (notes / "paging.md").write_text("# Paging\n\nPage the on-call engineer for a SEV-1 incident.\n")
    (notes / "backup.md").write_text("# Backups\n\nNightly backups run at two; restore with the tool.\n")
    env = {**os.environ, "DOCSHELF_EMBED__MODEL": "hash", "HOME": str(root), "COLUMNS": "80"}
    env.pop("XDG_DATA_HOME", None)
    data = root / "data"
    subprocess.run(
        [sys.executable, "-m", "docshelf", "index", str(notes), "--data-dir", str(data)],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    return data, env


_TYPER = "import sys; sys.argv[0] = 'docshelf'; from docshelf.cli.main import main; main()"


@pytest.mark.parametrize(
    "args",
    [
        ["search", "on-call incident", "--mode", "keyword"],
        ["search", "backups", "-k1", "--ids"],
        ["search", "restore", "--json", "--mode", "keyword"],
        ["search", "nothing matches zyxwv", "--mode", "keyword"],
        ["search", "paging", "-c", "no-such-collection"],
        ["-v", "search", "paging", "--path", "*.md", "--type", "markdown", "--no-rerank"],
        ["search", "paging", "--data-dir", "{missing}"],
    ],
)
def test_both_paths_answer_alike(indexed: tuple[Path, dict[str, str]], args: list[str]) -> None:
    """The same exit code, stdout and stderr from this reader as from the typer command, on hits,
    JSON, no hits, a missing collection and a data dir with no index (the error lines)."""
    data, env = indexed
    args = [a.replace("{missing}", str(data.parent / "missing")) for a in args]
    if "--data-dir" not in args:
        args = ["--data-dir", str(data), *args]
    assert direct.parse(args[args.index("search") + 1 :]) is not None  # this reader takes them
    ours = _run([sys.executable, "-m", "docshelf", *args], env)
    typers = _run([sys.executable, "-c", _TYPER, *args], env)
    assert ours == typers
    assert ours[1] or ours[2]  # it said something


def test_shell_completion_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_DOCSHELF_COMPLETE", "bash_complete")
    assert direct.answered(["search", "q"]) is None
