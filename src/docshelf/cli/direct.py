"""`docshelf search` in this process without typer: its arguments read with a table of its options.

With no search helper to ask (cli/quick.py), a keyword search from a script paid for the
command-line framework: importing typer, which imports pydantic, and building a pydantic adapter
for each of the command's parameters while parsing (~350 ms through typer, ~230 ms here, with
settings that need no pydantic either). Arguments this reader takes exactly as typer
would are answered here with the same output and exit code; anything else (`--help`, an option
it does not know, an option's value that starts with "-", a number typer might read differently,
an unknown mode) goes to the typer command, which says what is wrong as it always did.
tests/test_cli_direct.py checks the table against the typer command's parameters and both paths'
output against each other.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.cli.quick import split_command

if TYPE_CHECKING:
    from docshelf.shelf import SearchRequest, Shelf

__all__ = ["MODES", "OPTIONS", "PATHS", "answered", "interactive", "parse", "run", "show", "stdin_query"]

MODES = (None, "hybrid", "keyword", "semantic")
K_RANGE = (1, 1000)
# spelling -> (the search function's parameter, kind): "flag" sets True, "off" False, "int" and
# "text" take one value (the last one given wins, as in click), "many" collects every one
OPTIONS: dict[str, tuple[str, str]] = {
    "--k": ("k", "int"), "-k": ("k", "int"), "-n": ("k", "int"), "--limit": ("k", "int"),
    "--mode": ("mode", "text"),
    "--collection": ("collection", "many"), "-c": ("collection", "many"), "--path": ("path", "text"),
    "--tag": ("tag", "many"), "--type": ("file_type", "many"),
    "--include-superseded": ("include_superseded", "flag"), "--rerank": ("rerank", "flag"),
    "--no-rerank": ("rerank", "off"), "--ids": ("ids", "flag"), "--no-helper": ("no_helper", "flag"),
    "--config": ("config", "text"), "--data-dir": ("data_dir", "text"), "--json": ("as_json", "flag"),
}  # fmt: skip
PATHS = ("config", "data_dir")  # "text" options that typer reads as a Path
_DEFAULTS: dict[str, Any] = {
    "k": 10, "mode": None, "collection": None, "path": None, "tag": None, "file_type": None,
    "include_superseded": False, "rerank": None, "ids": False, "no_helper": False, "config": None,
    "data_dir": None, "as_json": False,
}  # fmt: skip


def _option(arg: str) -> tuple[str, str | None] | None:
    """The option ``arg`` spells and the value written into it ("--k=5", "-k5"), None if unknown."""
    if arg.startswith("--"):
        name, eq, value = arg.partition("=")
        return (name, value if eq else None) if name in OPTIONS else None
    if arg in OPTIONS:
        return arg, None
    short = arg[:2]
    if short in OPTIONS and OPTIONS[short][1] not in ("flag", "off"):
        return short, arg[2:]
    return None


def _value(kind: str, text: str) -> Any:
    """``text`` as the option's value, or None where typer may read it otherwise or refuse it."""
    if kind == "int":
        # digits only: typer's pydantic reads "+5", " 5" or "5_0" its own way, or refuses them
        if not (text.isascii() and text.isdigit()):
            return None
        number = int(text)
        return number if K_RANGE[0] <= number <= K_RANGE[1] else None
    return text or None  # an empty value: typer's own reading (a Path of "" is ".")


def parse(args: Sequence[str]) -> dict[str, Any] | None:
    """The search function's keyword arguments from the command's own ``args``, or None for
    anything this reader does not take exactly as typer would."""
    values = dict(_DEFAULTS)
    query: str | None = None
    i, options = 0, True
    while i < len(args):
        arg, i = args[i], i + 1
        if options and arg == "--":
            options = False
            continue
        if not options or not arg.startswith("-") or arg == "-":
            if query is not None:
                return None  # a second argument: typer's "got unexpected extra argument"
            query = arg
            continue
        found = _option(arg)
        if found is None:
            return None
        (key, kind), given = OPTIONS[found[0]], found[1]
        if kind in ("flag", "off"):
            if given is not None:
                return None  # "--json=yes": typer refuses a value for a flag
            values[key] = kind == "flag"
            continue
        if given is None:
            if i >= len(args) or args[i].startswith("-"):
                return None  # no value, or one that may be meant as an option
            given, i = args[i], i + 1
        value = _value(kind, given)
        if value is None:
            return None
        if kind == "many":
            values[key] = [*(values[key] or []), value]
        else:
            values[key] = value
    if query is None or values["mode"] not in MODES:
        return None
    for key in PATHS:
        values[key] = Path(values[key]) if values[key] is not None else None
    return {"query": query, **values}


def interactive() -> bool:
    """Run from a terminal (not a script's pipe): where repeated searches by a person are likely."""
    return any(stream.isatty() for stream in (sys.stdin, sys.stdout))


def show(shelf: Shelf, req: SearchRequest, collection: Sequence[str] | None, ids: bool, as_json: bool) -> int:
    """Search and print the hits (or JSON); the exit code: 1 when nothing was found."""
    from docshelf.cli import render
    from docshelf.cli.base import check_collections
    from docshelf.cli.output import data, err, out, print_json

    known = check_collections(shelf, collection or ())
    result = shelf.search(req)
    searched = len(collection) if collection else len(known)
    if as_json:
        print_json(result.as_dict(with_text=True))  # highlights index into text
        return 0
    if not result.hits:
        err.print(data(f"no results: {result.note}"))
        return 1
    multi = searched > 1 or len({h.collection for h in result.hits}) > 1
    out.print(render.hits(result, with_collection=multi, with_id=ids))
    if result.note:
        err.print(data(f"note: {result.note}"))
    if out.is_terminal:
        err.print(data(f"in context: docshelf read {render.location(result.hits[0])} -C 5", "dim"))
    return 0


def stdin_query(command: str = "search") -> str:
    """The query piped in (`git diff | docshelf search -`), as "-" reads stdin for cat or grep."""
    from docshelf.errors import ConfigError

    query = sys.stdin.read().strip()
    if not query:
        raise ConfigError(f"nothing on stdin to {command}: pipe it in (echo words | docshelf {command} -) "
                          "or give it as an argument")  # fmt: skip
    return query


def run(values: dict[str, Any], kept: Shelf | None = None) -> int:
    """What `docshelf search` does with its parsed arguments (``values``: the search function's,
    by name), here and in the typer command; ``kept``: the search helper's open shelf."""
    from docshelf.cli.base import given_options, load, open_shelf
    from docshelf.cli.quick import start
    from docshelf.shelf import SearchRequest

    collection, mode, query = values["collection"], values["mode"], values["query"]
    req = SearchRequest(
        stdin_query() if query == "-" else query, values["k"], mode, tuple(collection or ()), values["path"],
        tuple(values["tag"] or ()), tuple(values["file_type"] or ()), values["include_superseded"],
        values["rerank"],
    )  # fmt: skip
    if kept is not None:
        return show(kept, req, collection, values["ids"], values["as_json"])
    loaded = load(values["config"], values["data_dir"], None, read_only=True)
    with open_shelf(loaded) as shelf:  # an index that opens is one to keep open, hits or none
        code = show(shelf, req, collection, values["ids"], values["as_json"])
    wanted = loaded.settings.search.helper
    if not values["no_helper"] and (wanted == "on" or (wanted == "auto" and interactive())):
        warm = (mode or loaded.settings.search.mode) != "keyword"
        # the command's own --config and --data-dir, else those given before it
        config, data_dir = given_options(values["config"], values["data_dir"])
        start(config, data_dir, warm, loaded.settings.search.helper_idle_s)
    return code


def answered(argv: Sequence[str]) -> int | None:
    """The exit code of `docshelf ARGV` if it is a search this module answered, else None (the
    typer command line runs it)."""
    found = split_command(argv, flags=("-v", "--verbose"))
    if found is None or found[1] != "search" or "_DOCSHELF_COMPLETE" in os.environ:
        return None  # (shell completion: typer answers it)
    before, _, args = found
    values = parse(args)
    if values is None or "" in (before.get("--config"), before.get("--data-dir")):
        return None
    from docshelf.cli.base import given_before, said
    from docshelf.cli.logs import setup_logging

    setup_logging(verbose="-v" in before or "--verbose" in before)
    config, data_dir = before.get("--config"), before.get("--data-dir")
    given_before(Path(config) if config else None, Path(data_dir) if data_dir else None)
    try:
        return run(values)
    except (Exception, KeyboardInterrupt) as exc:  # one line and its exit code, as every command
        return said(exc, "search")
