"""Writes from the page: index a folder, reindex, forget; one at a time, with progress and cancel.

A job runs on its own thread and the page polls it. Cancelling works as it does for the MCP
tools: the next progress call (once per file) raises, the indexer stops between documents (each
is swapped in its own transaction) and lets go of its locks, and what was indexed so far stays.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.errors import ConfigError, DocshelfError, EmbedError

if TYPE_CHECKING:
    from docshelf.shelf import IndexReport, Shelf

__all__ = ["ACTIONS", "Job", "Jobs"]

log = logging.getLogger("docshelf.web")

ACTIONS = ("index", "reindex", "forget")
_LISTED = 100  # skipped and removed paths a report lists; the counts cover all


class _Cancelled(Exception):
    """Raised inside the job's thread at the first progress call after a cancel."""


@dataclass
class Job:
    id: str
    action: str
    target: str | None
    collection: str | None
    state: str = "running"  # running | done | failed | cancelled
    phase: str = "starting"
    done: int = 0
    total: int = 0
    message: str | None = None
    report: dict[str, Any] | None = None
    started: float = field(default_factory=time.time)
    finished: float | None = None
    cancel: threading.Event = field(default_factory=threading.Event, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "action": self.action, "target": self.target, "collection": self.collection,
            "state": self.state, "phase": self.phase, "done": self.done, "total": self.total,
            "message": self.message, "report": self.report, "cancelling": self.cancel.is_set(),
            "seconds": round((self.finished or time.time()) - self.started, 1),
        }  # fmt: skip


def _summary(reports: list[IndexReport]) -> dict[str, Any]:
    syncs = [r.sync for r in reports]
    skipped = [{"path": s.path, "reason": s.reason} for r in syncs for s in r.skipped]
    return {
        "collection": ", ".join(r.collection for r in syncs) or None,
        "added": sum(len(r.added) for r in syncs), "updated": sum(len(r.updated) for r in syncs),
        "removed": sum(len(r.removed) for r in syncs), "unchanged": sum(r.unchanged for r in syncs),
        "skipped": skipped[:_LISTED], "skipped_total": len(skipped),
        "notes": [n for r in reports for n in r.notes],
    }  # fmt: skip


class Jobs:
    """The page's write jobs over one shelf: at most one runs; the last one is kept to show."""

    def __init__(self, shelf: Shelf, allowed: list[Path]) -> None:
        self.shelf = shelf
        self.allowed = allowed
        self._lock = threading.Lock()
        self.last: Job | None = None
        self._thread: threading.Thread | None = None

    def start(self, action: str, target: str | None, collection: str | None) -> Job:
        if action not in ACTIONS:
            raise ConfigError(f"no action {action!r}; the page can {', '.join(ACTIONS)}")
        target = (target or "").strip() or None
        if action != "reindex" and target is None:
            raise ConfigError(f"{action} needs a folder, file or URL")
        with self._lock:
            if self.last is not None and self.last.state == "running":
                raise DocshelfError(
                    f"a {self.last.action} is running; wait for it to finish or cancel it first"
                )
            job = Job(secrets.token_hex(8), action, target, (collection or "").strip() or None)
            self.last = job
        self._thread = threading.Thread(target=self._run, args=(job,), name=f"docshelf-web-{action}")
        self._thread.start()
        return job

    def close(self, wait: float = 60.0) -> None:
        """Cancel a running job and wait (up to ``wait`` seconds) until it has stopped."""
        job, thread = self.last, self._thread
        if job is not None and job.state == "running":
            job.cancel.set()
        if thread is not None:
            thread.join(wait)

    def get(self, job_id: str) -> Job | None:
        job = self.last
        return job if job is not None and job.id == job_id else None

    def _run(self, job: Job) -> None:
        shelf = self.shelf

        def progress(phase: str, done: int, total: int) -> None:
            if job.cancel.is_set():
                raise _Cancelled
            job.phase, job.done, job.total = phase, done, total

        try:
            job.phase = "loading the model"
            why = shelf.wait_for_model()
            if why:
                raise EmbedError(f"cannot index: {why}")
            progress("preparing", 0, 0)
            if job.action == "index":
                assert job.target is not None
                job.report = _summary(
                    [shelf.ingest(job.target, job.collection, allowed=self.allowed, progress=progress)]
                )
            elif job.action == "reindex":
                job.report = _summary(shelf.reindex(job.collection, progress))
            else:
                assert job.target is not None
                gone = shelf.forget(job.target, job.collection)
                job.report = {
                    "collection": gone.collection, "removed": len(gone.removed),
                    "removed_paths": gone.removed[:_LISTED], "root": gone.root,
                }  # fmt: skip
            job.state = "done"
        except _Cancelled:
            job.state, job.message = "cancelled", "cancelled: what was indexed before the cancel is kept"
        except DocshelfError as exc:
            job.state, job.message = "failed", str(exc)
        except Exception as exc:  # a bug of ours: one line for the page, the traceback in the log
            log.exception("web %s failed", job.action)
            job.state = "failed"
            job.message = f"unexpected {type(exc).__name__}: {exc}; this is a docshelf bug, please report it"
        finally:
            job.finished = time.time()
