"""Live indexing: file-system events, debounced into incremental syncs, under a supervisor.

A worker thread waits on ``watchfiles`` events for the collection's roots; each batch of changes
(grouped over at most ``watch.debounce_ms``) runs :meth:`Indexer.sync`, which re-embeds only what
changed. A full rescan every ``watch.rescan_s`` catches events the OS dropped. If the worker dies,
the supervisor logs it, counts it, records it in the store and starts a new worker, which first
syncs to catch up. The health (last event, last sync, last error, restarts) lives in the store's
meta table under ``watch_health`` so `docshelf status` in any process can show it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.config import WatchSettings
from docshelf.errors import DocshelfError, SourceError
from docshelf.index.lock import pid_alive

if TYPE_CHECKING:
    from docshelf.index.sync import Indexer, SyncReport

__all__ = ["HEALTH_KEY", "Watcher", "read_health"]

log = logging.getLogger("docshelf.watch")

HEALTH_KEY = "watch_health"
_TICK_MS = 500  # the worker wakes at least this often to check rescans and stop requests
_MAX_BACKOFF_S = 30.0
_HEALTH_LOCK = threading.Lock()


def read_health(get_meta: Callable[[str], str | None]) -> dict[str, dict[str, Any]]:
    """Every collection's watcher health from the meta table (collection -> health)."""
    raw = get_meta(HEALTH_KEY)
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    for health in value.values():
        pid = health.get("pid") if isinstance(health, dict) else None
        if isinstance(pid, int) and health.get("state") != "stopped":
            health["alive"] = pid_alive(pid)
    return value


class Watcher:
    """Keeps one collection's index up to date while it runs (``start``/``stop``)."""

    def __init__(
        self,
        indexer: Indexer,
        collection: str,
        settings: WatchSettings,
        roots: Sequence[Path] = (),
        on_sync: Callable[[SyncReport], None] | None = None,
    ) -> None:
        self.indexer = indexer
        self.store = indexer.store
        self.collection = collection
        self.settings = settings
        self.roots = [Path(r).expanduser().resolve() for r in roots]
        self.on_sync = on_sync or (lambda report: None)
        # what one sync does; replaceable (tests inject failures here). Keyword first: the vectors
        # are computed on a thread of their own (``_embed_loop``), so an edit made meanwhile is
        # keyword-searchable within a sync, not after the model has caught up with a large tree
        self.sync_fn: Callable[[], SyncReport] = lambda: self.indexer.sync(
            self.collection, self.roots, keyword_only=True
        )
        # a sync of just the files events named: it costs the same with any number of files
        self.changed_fn: Callable[[list[Path]], SyncReport] = lambda paths: self.indexer.sync(
            self.collection, self.roots, changed=paths, keyword_only=True
        )
        self._stop = threading.Event()
        self._vectors_due = threading.Event()
        self._embedder: threading.Thread | None = None
        self._supervisor: threading.Thread | None = None
        self._worker: threading.Thread | None = None
        self._worker_error: BaseException | None = None
        self.health: dict[str, Any] = {
            "collection": collection,
            "pid": os.getpid(),
            "state": "starting",
            "started_at": None,
            "roots": [],
            "last_event_at": None,
            "events": 0,
            "last_sync_at": None,
            "last_sync": None,
            "syncs": 0,
            "last_error": None,
            "last_error_at": None,
            "restarts": 0,
            "vectors": None,  # the last embedding pass: chunks filled, still missing, seconds
        }

    # ----- control -----
    def start(self) -> None:
        if self._supervisor is not None:
            return
        self._stop.clear()
        self.health["started_at"] = time.time()
        self._supervisor = threading.Thread(
            target=self._supervise, name="docshelf-watch-supervisor", daemon=True
        )
        self._supervisor.start()
        self._vectors_due.set()  # what an earlier run (or process) left without vectors: resumed
        self._embedder = threading.Thread(target=self._embed_loop, name="docshelf-watch-vectors", daemon=True)
        self._embedder.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout)
            self._supervisor = None
        if self._embedder is not None:
            # it stops between batches (one: seconds); a process that exits while it is inside
            # onnxruntime dies of SIGABRT, so it is given the time a slow batch may take
            self._embedder.join(max(timeout, 300.0))
            self._embedder = None
        self.health["state"] = "stopped"
        self._save_health()

    def run_forever(self) -> None:
        """Watch until Ctrl-C (or :meth:`stop` from another thread)."""
        self.start()
        try:
            while not self._stop.wait(0.5):
                pass
        finally:
            self.stop()

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def worker_alive(self) -> bool:
        return self._worker is not None and self._worker.is_alive()

    # ----- supervisor -----
    def _supervise(self) -> None:
        failures = 0
        while not self._stop.is_set():
            self._worker_error = None
            self._worker = threading.Thread(target=self._work, name="docshelf-watch", daemon=True)
            began = time.monotonic()
            self._worker.start()
            self._worker.join()
            if self._stop.is_set():
                break
            error = self._worker_error
            what = f"{type(error).__name__}: {error}" if error else "the watcher thread exited"
            failures = 1 if time.monotonic() - began > 60 else failures + 1
            self.health["restarts"] += 1
            self.health["state"] = "restarting"
            self._record_error(f"watcher died ({what}); restarted")
            log.error(
                "docshelf watch (%s): the watcher thread died (%s); restarting it (restart %d)",
                self.collection, what, self.health["restarts"],
            )  # fmt: skip
            if self._stop.wait(min(_MAX_BACKOFF_S, 0.1 * 2 ** min(failures - 1, 10))):
                break

    # ----- vectors -----
    def _embed_loop(self) -> None:
        """Compute the vectors of what the syncs swapped in, after each sync, until stopped. A
        failure (the model, the store) is recorded and tried again at the next sync."""
        while not self._stop.is_set():
            if not self._vectors_due.wait(_TICK_MS / 1000):
                continue
            self._vectors_due.clear()
            try:
                run = self.indexer.embed_pending(self._stop.is_set)
            except DocshelfError as exc:
                self._record_error(f"computing vectors: {exc}")
                log.warning("docshelf watch (%s): computing vectors failed: %s", self.collection, exc)
                continue
            except Exception as exc:  # the watcher goes on keyword-first; the next sync retries
                log.exception("docshelf watch (%s): computing vectors failed", self.collection)
                self._record_error(f"computing vectors: {type(exc).__name__}: {exc}")
                continue
            if run.filled or run.failed:
                self.health["vectors"] = {
                    "filled": run.filled, "missing": run.remaining, "seconds": round(run.seconds, 3),
                }  # fmt: skip
                self._save_health()

    # ----- worker -----
    def _work(self) -> None:
        try:
            self._watch_loop()
        except BaseException as exc:
            self._worker_error = exc
            log.debug("watcher thread failed", exc_info=True)

    def _watch_roots(self) -> list[Path]:
        known = [Path(r) for r in self.store.collection_roots(self.collection)]
        roots = [r for r in dict.fromkeys([*known, *self.roots]) if r.is_dir()]
        if not roots:
            raise SourceError(
                f"collection {self.collection!r} has no existing folders to watch; "
                "pass a folder: `docshelf watch PATH`"
            )
        return roots

    def _indexed_as(self, roots: Sequence[Path]) -> Callable[[Path], str | None]:
        from docshelf.index.changes import indexed_as
        from docshelf.index.mounts import mounts

        found = mounts(self.store, self.collection, roots)
        return lambda path: indexed_as(self.store, self.collection, found, path)

    def _watch_loop(self) -> None:
        import watchfiles

        data_dir = str(Path(self.store.data_dir).resolve())
        last_full = time.monotonic()
        changed: set[Path] | None = set()  # None: something only a full sync handles
        pending = False
        while not self._stop.is_set():
            # catch up on what changed while nobody watched (before the first start, while the
            # last worker was dead, while the roots changed): a full sync once the OS watch is
            # set up, so that a change made during the sync or just before it is not missed
            catch_up = True
            roots = self._watch_roots()
            watch_filter = _Events(roots, data_dir)
            self.health["roots"] = [str(r) for r in roots]
            self.health["state"] = "starting"  # "running" once the catch-up sync is done
            self._save_health()
            for changes in watchfiles.watch(
                *roots,
                watch_filter=watch_filter,
                debounce=self.settings.debounce_ms,
                step=min(50, self.settings.debounce_ms),
                stop_event=self._stop,
                rust_timeout=_TICK_MS,
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                if self._stop.is_set():
                    return
                why = "change"
                if catch_up:
                    catch_up, why = False, "start"
                    pending, changed = True, None
                if changes:
                    pending = True
                    self.health["last_event_at"] = time.time()
                    self.health["events"] += len(changes)
                    changed = _files_only(changed, [Path(p) for _, p in changes], self._indexed_as(roots))
                rescan = self.settings.rescan_s > 0 and time.monotonic() - last_full >= self.settings.rescan_s
                if pending or rescan:
                    full = rescan or changed is None
                    # a DocshelfError (another writer too long, a bad root) keeps the change pending
                    pending = not self._sync(
                        "rescan" if rescan and not pending else why,
                        None if full else sorted(changed or ()),
                    )
                    if not pending:
                        changed = set()
                        if self.health["state"] != "running":  # caught up
                            self.health["state"] = "running"
                            self._save_health()
                    if full:
                        last_full = time.monotonic()
                if [str(r) for r in self._watch_roots()] != self.health["roots"]:
                    break  # a root was added or removed: watch the new set

    def _sync(self, why: str, paths: list[Path] | None = None) -> bool:
        """One sync (of ``paths`` only, when given); a DocshelfError is recorded and returns False,
        anything else kills the worker."""
        started = time.perf_counter()
        try:
            report = self.sync_fn() if paths is None else self.changed_fn(paths)
        except DocshelfError as exc:
            self._record_error(str(exc))
            log.warning("docshelf watch (%s): sync failed: %s", self.collection, exc)
            return False
        self._vectors_due.set()
        self.health["syncs"] += 1
        self.health["last_sync_at"] = time.time()
        self.health["last_sync"] = {
            "why": why,
            "added": len(report.added),
            "updated": len(report.updated),
            "removed": len(report.removed),
            "skipped": len(report.skipped),
            "seconds": round(time.perf_counter() - started, 3),
        }
        self._save_health()
        if report.added or report.updated or report.removed:
            self.on_sync(report)
        return True

    # ----- health -----
    def _record_error(self, message: str) -> None:
        self.health["last_error"] = message
        self.health["last_error_at"] = time.time()
        self._save_health()

    def _save_health(self) -> None:
        try:
            with _HEALTH_LOCK:  # read-modify-write of the shared key, within this process
                current = read_health(self.store.get_meta)
                mine = {k: v for k, v in self.health.items() if k != "alive"}
                current[self.collection] = mine
                for health in current.values():
                    health.pop("alive", None)
                self.store.set_meta(HEALTH_KEY, json.dumps(current))
        except Exception:
            log.warning("could not record the watcher's health", exc_info=True)


class _Events:
    """The events worth a sync: what the indexer reads. Not watchfiles' default filter, which
    drops node_modules/, __pycache__/, *~ and more that `docshelf index` does index (their edits
    went unseen until the next rescan), and drops a whole root below a folder of those names."""

    def __init__(self, roots: Sequence[Path], data_dir: str) -> None:
        self.prefixes = sorted((str(r).rstrip(os.sep) + os.sep for r in roots), key=len, reverse=True)
        self.data_dir = data_dir.rstrip(os.sep) + os.sep

    def __call__(self, change: object, path: str) -> bool:
        if path.startswith(self.data_dir) or path + os.sep == self.data_dir:
            return False
        root = next((p for p in self.prefixes if path.startswith(p)), None)
        parts = (path[len(root) :] if root else os.path.basename(path)).split(os.sep)
        # hidden names are never documents (a .gitignore is a rule: it counts)
        return not any(p.startswith(".") for p in parts[:-1]) and (
            not parts[-1].startswith(".") or parts[-1] == ".gitignore"
        )


_MAX_TARGETED = 1000
_RULE_FILES = (".gitignore", "docshelf.toml")


def _files_only(
    changed: set[Path] | None, paths: list[Path], indexed_as: Callable[[Path], str | None]
) -> set[Path] | None:
    """``changed`` plus ``paths``, or None once a full sync is needed: a folder came, went or moved,
    the rules changed, or too many files did. ``indexed_as`` tells what the index holds for a path
    gone from disk ("folder", "file" or None)."""
    if changed is None:
        return None
    for path in paths:
        if path.name in _RULE_FILES or path.is_dir():
            return None
        if not path.exists():
            held = indexed_as(path)
            if held == "folder":  # moved or deleted with its documents, which sent no events
                return None
            if held is None:  # gone before anyone looked: vim's `4913` probe, `file~`, `#file#`, `file.tmp`
                continue
        changed.add(path)
    return changed if len(changed) <= _MAX_TARGETED else None
