"""The `docshelf` command line: each command parses its arguments, calls the shelf and renders.

The heavy parts (the shelf's store, numpy, tantivy, rich tables, pydantic settings) are imported
inside the commands that use them, so `docshelf serve` and `--help` start quickly.
"""

from __future__ import annotations

from typing import Annotated

import typer

from docshelf.cli import ask, doctor, helper, index, live, migrate, read, search, serve, status
from docshelf.cli.logs import setup_logging

__all__ = ["app", "main"]

app = typer.Typer(
    name="docshelf",
    help="Local-first document search for LLM agents: index folders, search them, serve them over MCP.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="debug logs on stderr, other libraries' warnings too")
    ] = False,
) -> None:
    setup_logging(verbose)


for _module in (index, search, read, status, serve, live, doctor, ask, migrate, helper):
    _module.register(app)


def main() -> None:
    app()
