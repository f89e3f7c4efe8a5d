"""The `index` progress display: a line per phase with its rate and time left, and the file at hand.

A sync reads every new or changed file first (each keyword-searchable once read), then computes
the vectors; one file can take long on its own (OCR, a large PDF), so the file being worked on is
shown with the time spent on it so far, which rich redraws while nothing else moves.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from docshelf.cli.output import err, name

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["PHASES", "IndexProgress"]

# the indexer's phase -> (what the line says, what it counts)
PHASES = {
    "index": ("reading files", "files"),
    "vectors": ("embedding", "chunks"),
    "reembed": ("re-embedding", "chunks"),
}
_SHOW_AFTER_S = 2.0  # a file is shown with its own time once it has taken this long
_NAME_CELLS = 40


class _Rate(ProgressColumn):
    """Items per second over the last half minute (rich's own estimate)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if not speed:
            return Text("")
        unit = task.fields.get("unit", "")
        return Text(f"{speed:.1f} {unit}/s" if speed < 100 else f"{speed:.0f} {unit}/s", style="dim")


class _Current(ProgressColumn):
    """The file being read or embedded, with the seconds spent on it once they add up."""

    def render(self, task: Task) -> Text:
        current = task.fields.get("current")
        if not current or task.finished:
            return Text("")
        shown = current if len(current) <= _NAME_CELLS else "…" + current[-(_NAME_CELLS - 1) :]
        text = name(shown, "cyan")
        spent = time.monotonic() - task.fields.get("since", time.monotonic())
        if spent >= _SHOW_AFTER_S:
            text.append(f" ({spent:.0f} s)", style="yellow")
        return text


class IndexProgress:
    """``with IndexProgress(enabled) as show:`` then ``show(phase, done, total, current=...)``, the
    indexer's progress callback."""

    def __init__(self, enabled: bool) -> None:
        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            _Rate(),
            TimeRemainingColumn(),
            _Current(),
            console=err,
            # a dumb terminal cannot redraw a bar: it would leave a blank line where the bar was
            disable=not enabled or err.is_dumb_terminal,
            transient=True,
        )
        self.tasks: dict[str, TaskID] = {}

    def __enter__(self) -> IndexProgress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.tasks:
            self.bar.__exit__(kind, exc, tb)

    def __call__(self, phase: str, done: int, total: int, current: str | None = None) -> None:
        label, unit = PHASES.get(phase, (phase, "items"))
        task = self.tasks.get(phase)
        if not self.tasks:  # drawn from the first report on (an empty display leaves a blank line)
            self.bar.__enter__()
        if task is None:
            for earlier in self.tasks.values():  # a new phase: the ones before it are over
                self.bar.update(earlier, current=None)
            task = self.tasks[phase] = self.bar.add_task(label, total=total or None, unit=unit)
        fields: dict[str, Any] = {"completed": done, "total": total or None}
        if current != self.bar.tasks[task].fields.get("current"):
            fields.update(current=current, since=time.monotonic())
        self.bar.update(task, **fields)
