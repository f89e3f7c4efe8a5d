"""Printing for the CLI: JSON to stdout, tables and progress via rich, messages to stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

__all__ = ["err", "out", "print_json", "progress_bar"]

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def print_json(data: Any) -> None:
    """UTF-8 JSON (no \\u escapes) on stdout."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")
    sys.stdout.flush()


def progress_bar(enabled: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not enabled,
        transient=True,
    )
