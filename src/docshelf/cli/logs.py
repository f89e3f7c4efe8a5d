"""What reaches the terminal besides a command's output: docshelf's own warnings and anyone's
errors, one line each, and the first-run model preparation; other libraries' warnings and logs
only with ``-v``.

onnxruntime logs "Please consider to run pre-processing before quantization" on the root logger
while the e5 graph is built, openpyxl warns about odd workbooks: neither is for the user to act on.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from docshelf.cli.output import data, err
from docshelf.cli.render import wrapped

if TYPE_CHECKING:
    from docshelf.shelf import Preparation

__all__ = ["announce", "listen_for_preparation", "setup_logging"]

_STYLES = {logging.WARNING: "yellow", logging.ERROR: "red", logging.CRITICAL: "red"}
_handler: logging.Handler | None = None
_listening = False


class _Quiet(logging.Formatter):
    """Records as "warning: message", one line: the traceback of a logged exception only with -v."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


class _Console(logging.Handler):
    """Through the stderr console: above a progress bar, control characters made visible."""

    def __init__(self, verbose: bool) -> None:
        super().__init__(logging.DEBUG if verbose else logging.WARNING)
        self.verbose = verbose

    def filter(self, record: logging.LogRecord) -> bool:
        if self.verbose or record.levelno >= logging.ERROR:  # a library's error is news (port in use)
            return True
        return record.name == "docshelf" or record.name.startswith("docshelf.")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            err.print(data(self.format(record), _STYLES.get(record.levelno, "")))
        except Exception:
            self.handleError(record)


def setup_logging(verbose: bool) -> None:
    """Route logging and Python warnings to stderr: docshelf's warnings always, the rest with -v."""
    global _handler
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
    _handler = _Console(verbose)
    _handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s") if verbose else _Quiet())
    root.addHandler(_handler)
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    logging.captureWarnings(True)  # warnings.warn(...) from libraries become "py.warnings" records


def announce(event: Preparation) -> None:
    """Say what the model preparation is doing: it takes seconds, once per machine."""
    if event.seconds is None:
        err.print(wrapped(data(f"{event.what} ...", "cyan"), err, first=0, rest=2))
    else:
        outcome = "done" if event.ok else "failed"
        err.print(data(f"  {outcome} in {event.seconds:.1f}s", "cyan" if event.ok else "red"))


def listen_for_preparation() -> None:
    """Announce model preparation for the rest of this process (the first call registers)."""
    global _listening
    if not _listening:
        from docshelf.shelf import on_model_preparation

        on_model_preparation(announce)
        _listening = True
