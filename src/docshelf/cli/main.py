"""The `docshelf` command line: each command parses its arguments, calls the shelf and renders.

The heavy parts (the shelf's store, numpy, tantivy, rich tables, pydantic settings) are imported
inside the commands that use them, so `docshelf serve` and `--help` start quickly.
"""

from __future__ import annotations

import typer

from docshelf.cli import ask, doctor, grep, index, listing, live, migrate, read, search, serve, status, ui
from docshelf.cli.root import DocshelfGroup, root

__all__ = ["app", "main"]

app = typer.Typer(
    name="docshelf",
    help="Local-first document search for LLM agents: index folders, search them, serve them over MCP.",
    no_args_is_help=True,
    cls=DocshelfGroup,  # one-line usage errors, help that fits 80 columns
    pretty_exceptions_enable=False,
)
app.callback()(root)  # --data-dir, --config, -v and --version before the command


for _module in (index, search, grep, read, listing, status, serve, ui, live, doctor, ask, migrate):
    _module.register(app)


def main() -> None:
    # `python -m docshelf` too: its usage lines and shell completion name the command, not python
    app(prog_name="docshelf")
