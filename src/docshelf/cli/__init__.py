"""CLI: the `docshelf` command.

A search first asks the per-user search helper (cli/quick.py, the standard library only); only
when none answers are the command line's own modules (typer, rich, the shelf) imported.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["app", "main"]


def main() -> None:
    from docshelf.cli.quick import answered

    code = answered(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from docshelf.cli.main import main as run

    run()


def __getattr__(name: str) -> Any:
    if name == "app":
        from docshelf.cli.main import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
