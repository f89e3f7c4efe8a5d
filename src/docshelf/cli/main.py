"""The `docshelf` command line: each command parses its arguments, calls the shelf and renders.

The heavy parts (the shelf's store, numpy, tantivy, rich tables, the settings) are imported
inside the commands that use them, so `docshelf serve` and `--help` start quickly. A run that
names its command imports only the module that defines it (`search` does not load the server's
anyio or the index's progress bars); `docshelf --help`, shell completion and a mistyped command
get them all.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Sequence
from typing import Any

import typer

from docshelf.cli.quick import split_command
from docshelf.cli.root import DocshelfGroup, root

__all__ = ["COMMANDS", "MODULES", "app", "command_named", "main", "make_app"]

# the modules that define commands, in the order `docshelf --help` lists them
MODULES = ("index", "search", "grep", "read", "listing", "status", "serve", "ui", "live", "doctor",
           "ask", "migrate", "helper")  # fmt: skip
# command -> its module (tests/test_cli_commands.py checks this against what each module registers)
COMMANDS = {
    "index": "index", "forget": "index", "search": "search", "eval": "search", "grep": "grep",
    "show": "read", "read": "read", "ls": "listing", "status": "status", "serve": "serve",
    "install": "serve", "ui": "ui", "watch": "live", "compact": "live", "doctor": "doctor",
    "ask": "ask", "migrate": "migrate", "helper": "helper",
}  # fmt: skip


def command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs, if it names a known one after the root's own options; None for
    `--help`, `--version`, nothing, or a name that is no command (every module is loaded then)."""
    found = split_command(argv, flags=("-v", "--verbose"))
    return found[1] if found is not None and found[1] in COMMANDS else None


def make_app(command: str | None = None) -> typer.Typer:
    """The `docshelf` app with every command, or only ``command`` (and its module's others)."""
    app = typer.Typer(
        name="docshelf",
        help="Local-first document search for LLM agents: index folders, search them, serve them over MCP.",
        no_args_is_help=True,
        cls=DocshelfGroup,  # one-line usage errors, help that fits 80 columns
        pretty_exceptions_enable=False,
    )
    app.callback()(root)  # --data-dir, --config, -v and --version before the command
    for module in (COMMANDS[command],) if command is not None else MODULES:
        importlib.import_module(f"docshelf.cli.{module}").register(app)
    return app


app: typer.Typer  # made on first use (module __getattr__): a command's run makes its own


@functools.cache
def _full() -> typer.Typer:
    return make_app()


def __getattr__(name: str) -> Any:
    if name == "app":  # every command: tests, docs and the helper's parser use this one
        return _full()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    # `python -m docshelf` too: its usage lines and shell completion name the command, not python
    make_app(command_named(sys.argv[1:]))(prog_name="docshelf")
