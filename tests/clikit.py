"""The CLI in-process, as the CLI tests drive it: hash embedder, a private data dir, 80 columns."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from docshelf.cli import app
from docshelf.cli import output as cli_output


def runner(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> CliRunner:
    """A runner whose commands use ``data_dir`` and print at 80 columns (what a pipe gets; in a
    test rich would measure the developer's terminal)."""
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(data_dir))
    monkeypatch.setattr(cli_output.out, "_width", 80)
    monkeypatch.setattr(cli_output.err, "_width", 80)
    return CliRunner()


def run(cli: CliRunner, *args: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one command."""
    result = cli.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr
