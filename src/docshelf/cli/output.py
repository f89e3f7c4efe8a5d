"""Printing for the CLI: JSON to stdout, text and progress via rich, messages to stderr.

Document text and file names are data: the consoles never read markup or emoji codes from what
they print (styles come from ``rich.text.Text`` spans set here), and control characters are made
visible first, so a document cannot clear the screen, set the clipboard (OSC 52) or restyle output.
"""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from rich.progress import Progress

__all__ = ["data", "err", "message", "name", "out", "print_json", "progress_bar", "visible"]

out = Console(soft_wrap=True, markup=False, emoji=False, highlight=False)
err = Console(stderr=True, soft_wrap=True, markup=False, emoji=False, highlight=False)

# C0 controls but tab and newline, DEL, C1 controls, and the bidi overrides and isolates that
# reorder what a terminal shows (a file name that reads backwards)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CR = re.compile("\r\n?")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # json.dumps escapes C0 itself


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control picture: ESC shows as ␛
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\u{code:04x}" if code > 0xFF else f"\\x{code:02x}"


def visible(text: str) -> str:
    """``text`` with control characters shown as symbols (ESC as ␛); CRLF and a lone CR (old Mac
    files: each one ends a line) as a newline."""
    return _CONTROL.sub(_picture, _CR.sub("\n", text))


def data(text: str, style: str = "") -> Text:
    """Text from a document, a file name or a message, to print as it is: never markup."""
    return Text(visible(text), style=style)


def name(text: str, style: str = "") -> Text:
    """A file name or citation: ``data``, but a line break in it shows as ␊ (it is one line)."""
    return Text(_CONTROL.sub(_picture, text.replace("\n", "\u240a").replace("\r", "\u240d")), style=style)


def message(*parts: str | tuple[str, str]) -> Text:
    """A line of plain and (text, style) parts, each made safe to print."""
    return Text.assemble(*(data(p) if isinstance(p, str) else data(*p) for p in parts))


def print_json(payload: Any) -> None:
    """UTF-8 JSON (no \\u escapes but for control characters) on stdout; text is exact."""
    text = json.dumps(payload, ensure_ascii=False, indent=2, default=str)
    text = _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def progress_bar(enabled: bool) -> Progress:
    # rich.progress costs ~0.1 s to import: `docshelf serve` and a search never draw a bar
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        # a dumb terminal cannot redraw a bar: it would leave a blank line where the bar was
        disable=not enabled or err.is_dumb_terminal,
        transient=True,
    )
