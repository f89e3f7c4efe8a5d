"""`docshelf doctor`: which optional parsers and OCR languages are available, and how to add the rest."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import typer

from docshelf.cli.common import ConfigOpt, JsonOpt, handle_errors, load
from docshelf.cli.output import data, out, print_json

__all__ = ["register"]


def doctor(config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Show which optional parsers and OCR languages are available, and how to install the rest."""
    from docshelf.shelf import doctor_checks

    settings = load(config, None, None, Path.cwd()).settings
    found = doctor_checks(settings.parse.ocr, settings.parse.ocr_languages)
    if as_json:
        print_json({"checks": [asdict(c) for c in found]})
        return
    from rich.table import Table
    from rich.text import Text

    table = Table(title="docshelf doctor", show_lines=False)
    for column in ("", "component", "status", "to add it"):
        table.add_column(column, overflow="fold")
    for c in found:
        mark = Text("ok", style="green") if c.ok else Text("--", style="yellow")
        table.add_row(mark, data(c.name), data(c.detail), data(c.fix))
    out.print(table)


def register(app: typer.Typer) -> None:
    """Add `doctor` to the docshelf CLI."""
    app.command()(handle_errors(doctor))
