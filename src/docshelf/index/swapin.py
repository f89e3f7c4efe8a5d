"""The first phase's look at one file of a sync plan: read it, and parse and chunk it if it changed.

Runs ahead of the writes on another thread (index/ahead.py); it touches no store, so the
outcome says what the writer must do: nothing, refresh a stat, record a skip, or swap in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from docshelf.config import Settings
from docshelf.errors import DocshelfError
from docshelf.index.ids import content_hash
from docshelf.index.plan import SyncPlan
from docshelf.index.prepare import Pending
from docshelf.index.report import reason_of
from docshelf.sources.regular import FileRefused, read_regular
from docshelf.types import SourceFile

__all__ = ["Looked", "look_at"]

log = logging.getLogger("docshelf.index")

Prepare = Callable[[str, SourceFile, bytes, str, bool], Pending | None]  # collection, file, data, hash, new


@dataclass(frozen=True)
class Looked:
    """``held``: another root has this path; ``same``: unchanged (``touch``: its stat changed, not its
    bytes); ``skip``: ``reason``; ``excluded``: ``rag: false``; ``ready``: ``pending`` to swap in."""

    kind: Literal["held", "same", "touch", "skip", "excluded", "ready"]
    reason: str = ""
    pending: Pending | None = None


def look_at(
    settings: Settings, plan: SyncPlan, force: bool, prepare: Prepare, rel: str, f: SourceFile
) -> Looked:
    state = plan.states.get(rel)
    if plan.held_elsewhere(f):
        return Looked("held")
    same_root = state is not None and state.root == str(f.root)
    if state and not force and same_root and state.size == f.size and state.mtime_ns == f.mtime_ns:
        return Looked("same")
    try:  # regular files only, within the cap: the file may have changed since the walk
        data = read_regular(f.path, int(settings.sources.max_file_mb * 1_048_576))
    except FileRefused as exc:
        return Looked("skip", exc.reason)
    except OSError as exc:
        kept_note = "; its indexed version is kept" if state else ""
        return Looked("skip", f"cannot read: {exc.strerror}{kept_note}")
    digest = content_hash(data)
    if state and not force and same_root and state.content_hash == digest:
        return Looked("touch")
    try:
        pending = prepare(plan.collection, f, data, digest, state is None)
    except DocshelfError as exc:
        return Looked("skip", reason_of(rel, exc))
    except Exception as exc:
        log.exception("unexpected error parsing %s", rel)
        return Looked("skip", f"parser failed: {type(exc).__name__}: {exc}")
    return Looked("excluded") if pending is None else Looked("ready", pending=pending)
