"""CLI: the `docshelf` command.

A search first asks the per-user search helper (cli/quick.py, the standard library only); when
none answers, it runs in this process, without typer where its arguments allow (cli/direct.py).
Every other command, and a search whose arguments need typer's reading or its messages, goes to
the typer command line (cli/main.py).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["app", "main"]


def main() -> None:
    from docshelf.cli.pipe import CLOSED, hung_up, stdout_file, writing

    started = stdout_file()
    code: int | str | None = None
    try:
        code = writing(_answer)  # the helper's answer is written here
    except SystemExit as exc:
        code = CLOSED if exc.code == 1 and hung_up(started) else exc.code
    # flushed here, not at exit, where a reader that has gone made a traceback
    code = writing(sys.stdout.flush) or code
    sys.exit(code)


def _answer() -> None:
    from docshelf.cli.quick import answered

    code = answered(sys.argv[1:])
    if code is None:
        from docshelf.cli.direct import answered as direct

        code = direct(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from docshelf.cli.main import main as run

    run()


def __getattr__(name: str) -> Any:
    if name == "app":
        from docshelf.cli.main import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
