"""CLI: the `docshelf` command."""

from docshelf.cli.main import app, main

__all__ = ["app", "main"]
