"""Sync: make the store match the files under a collection's roots, one safe swap per document."""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from docshelf.analyze import Analyzer
from docshelf.analyze.language import count_language
from docshelf.analyze.portable import PortableAnalyzer
from docshelf.analyze.scripts import script_words
from docshelf.config import Settings, check_collection
from docshelf.embed.base import Embedder, Vectors
from docshelf.errors import DeclinedError
from docshelf.index import changes
from docshelf.index.ahead import Ahead
from docshelf.index.lock import WriterLock
from docshelf.index.mounts import Mount, locate, mounts, owner, record_named
from docshelf.index.plan import SyncPlan, held_reason, plan_sync
from docshelf.index.prepare import Pending, in_parallel, prepare
from docshelf.index.reembed import reembed_store
from docshelf.index.report import SyncReport, group_skipped, reason_kind
from docshelf.index.scope import record_excluded, record_languages, record_scripts, skip_records, skips_left
from docshelf.index.swapin import look_at
from docshelf.index.vectors import EmbedRun, embed_pending
from docshelf.parse import ParserRegistry, default_registry
from docshelf.parse.worker import trim_workers
from docshelf.sources.walk import kept_by
from docshelf.store.base import BuildRecord, DocState, Replacement, Store
from docshelf.types import SkippedFile, SourceFile

__all__ = ["Confirm", "EmbedRun", "Indexer", "Progress", "SyncReport", "group_skipped", "reason_kind"]

log = logging.getLogger("docshelf.index")

# (phase, done, total): "index" counts files parsed and swapped in (keyword-searchable), "vectors"
# chunks given their vector, "reembed" chunks re-embedded. A callback that also takes a keyword
# argument ``current`` is told the file being read (or embedded) too, before the work on it.
Progress = Callable[[str, int, int], None]
# (collection, paths a write would remove (maybe none), the root it forgets or None): False stops
# it, unchanged, with DeclinedError
Confirm = Callable[[str, list[str], str | None], bool]
_T = TypeVar("_T")

_PUBLISH_S = 2.0
# Files read, parsed and chunked ahead of the writes per parse worker: enough to keep the workers
# busy through a batch's write (~15 files of the batch's 4 x embed.batch_size chunks)
_AHEAD = 16
# Tokens kept free for the title/heading header that contextual_text puts before a chunk.
_HEADER_RESERVE = 48


class Indexer:
    """Runs syncs for one store and one embedder."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        settings: Settings,
        registry: ParserRegistry | None = None,
        progress: Progress | None = None,
        analyzer: Analyzer | None = None,
        confirm: Confirm | None = None,
    ) -> None:
        self.store = store
        # asked before anything is written when a sync or forget would remove documents (an agent's
        # user is asked through MCP elicitation); not asked: nothing is removed
        self.confirm = confirm
        self.analyzer = analyzer  # to count the languages of what is indexed (none: not counted)
        self._languages: dict[str, float] = {}
        self.embedder = embedder
        self.settings = settings
        self.registry = registry or default_registry(settings)
        self.progress = progress or (lambda phase, done, total: None)
        self._current = _takes_current(self.progress)
        self._warm_wanted = False
        self._warming: threading.Thread | None = None
        self._scripts: dict[str, float] = {}  # words per writing system swapped in (the "no match" note)
        self.max_tokens = max(16, min(settings.chunk.max_tokens, embedder.max_tokens - _HEADER_RESERVE))
        # the keyword terms are made where a file is parsed (a parse worker), by this analyzer
        self._portable = PortableAnalyzer(analyzer) if isinstance(analyzer, Analyzer) else None

    # ----- public -----
    def writer_lock(self, collection: str | None = None) -> WriterLock:
        """The index's single-writer lock (waits up to ``watch.lock_timeout_s``); on a shared store
        it also keeps other machines' writers of ``collection`` (None: of any) waiting."""
        store = self.store
        return WriterLock(
            store.data_dir, self.settings.watch.lock_timeout_s, lambda s: store.writer_guard(s, collection)
        )

    def _locked(self, job: Callable[[], _T], collection: str | None = None) -> _T:
        with self.writer_lock(collection):
            failed = True
            try:
                result = job()
                failed = False
                return result
            finally:
                self.store.end_write(failed)

    def sync(
        self, collection: str, roots: Sequence[Path] = (), skipped: Sequence[SkippedFile] = (),
        force: bool = False, scope: Sequence[Path] | None = None, changed: Sequence[Path] | None = None,
        keyword_only: bool = False,
    ) -> SyncReport:  # fmt: skip
        """Index new and changed files under the collection's roots; drop vanished ones.

        Keyword first, vectors after: each new or changed file is parsed, chunked and swapped in
        (searchable by keyword, listable, readable, citable) without waiting for the model; then
        the chunks still without a vector, this sync's and any an interrupted one left, are
        embedded (``embed_pending``), unless ``keyword_only``.

        ``skipped`` (e.g. URLs that could not be fetched) is recorded with the files this sync
        skips, under the same writer lock; ``force`` re-parses unchanged files too (after the
        chunk or parse settings changed). ``scope`` (roots, folders or files inside them) limits
        the sync to what lies under those paths: other roots are neither walked nor pruned.
        ``changed`` (a watcher's events, absolute file paths): only these files are looked at,
        created, updated or removed.
        """
        check_collection(collection)
        self._warm_wanted = not keyword_only
        try:
            if self._warm_wanted and self.store.missing_vectors():
                self._warm()
            report = self._locked(
                lambda: self._sync(collection, roots, skipped, force, scope, changed), collection
            )  # fmt: skip
            if not keyword_only:
                report.vectors = self.embed_pending()
                report.chunks_embedded = report.vectors.embedded
        finally:
            self._warm_wanted = False
            if self._warming is not None:  # never left inside onnxruntime at exit (it aborts the process)
                self._warming.join()
                self._warming = None
        report.vectors_missing = self.store.missing_vectors()
        report.seconds = time.time() - report.started
        return report

    def embed_pending(self, stop: Callable[[], bool] = lambda: False) -> EmbedRun:
        """Give every chunk still without a vector its vector (the second phase of a sync, resumable:
        the store lists what is left); ``stop()`` ends it between batches. Other writers go on
        between its batches; while another process embeds this index, it leaves the work to it."""
        self.store.check_model(self.embedder.name, self.embedder.dim)
        step = self.settings.embed.batch_size * 4
        return embed_pending(self.store, self.embedder, self._locked, step, self._report, stop)

    def _sync(
        self, collection: str, roots: Sequence[Path], skipped: Sequence[SkippedFile], force: bool,
        scope: Sequence[Path] | None = None, changed: Sequence[Path] | None = None,
    ) -> SyncReport:  # fmt: skip
        started = time.time()
        # no counts and no passages: a new index, not one from before the counts (nothing to backfill)
        uncounted = any(self.store.get_meta(key) is None for key in ("scripts", "languages"))
        fresh = uncounted and next(iter(self.store.iter_chunks()), None) is None
        unfinished = self.store.reembed_pending()
        wanted = (self.embedder.name, self.embedder.dim)
        if unfinished and (unfinished["model"], unfinished["dim"]) == wanted and self.store.model() != wanted:
            log.warning("continuing the interrupted re-embed with %s", self.embedder.name)
            self._reembed()
        self.store.check_model(self.embedder.name, self.embedder.dim)
        plan = plan_sync(
            self.store, self.registry, self.settings.sources, collection, roots, skipped, scope, changed
        )
        self._confirm(collection, [s.path for s in _gone(plan, ())], None)
        if plan.roots_now is not None:
            self.store.set_collection_roots(collection, plan.roots_now)
            record_named(self.store, collection, plan.named)
        self.store.set_model(self.embedder.name, self.embedder.dim)
        if self.store.needs_keyword_rebuild():
            log.warning(
                "keyword index behind the database or built by another analyzer version: rebuilding it "
                "from the database (no re-embedding)"
            )
            self.store.rebuild_keyword_index()
        plan.report.started = started
        self._swap_changed(plan, force)
        self._finish(plan, started, fresh)
        plan.report.keyword_seconds = plan.report.seconds
        return plan.report

    def _swap_changed(self, plan: SyncPlan, force: bool) -> None:
        """Read, parse and swap in every new or changed file of the plan (``force``: every file),
        with the vectors the store already has for its text; a file that cannot be read or parsed
        now keeps its indexed version."""
        report, files = plan.report, plan.files
        batch: list[Pending] = []
        batch_chunks = 0
        published = time.monotonic()
        ordered = sorted(files.items())
        look = functools.partial(look_at, self.settings, plan, force, self._prepare)
        threads = in_parallel(self.settings, self.embedder)
        try:
            with Ahead(lambda item: look(*item), ordered, _AHEAD * threads, threads, "read") as ahead:
                for done, (rel, f) in enumerate(ordered, start=1):
                    self._report("index", done - 1, len(files), rel)
                    # hand the interpreter to waiting readers (a server's searches) once per file
                    time.sleep(0)
                    looked = next(ahead)
                    state = plan.states.get(rel)
                    if looked.kind == "held":
                        holder = plan.holders[rel]
                        where = plan.folder(holder.root, holder.path), plan.folder(f.root, f.rel_path)
                        report.skipped.append(SkippedFile(rel, held_reason(*where)))
                    elif looked.kind == "skip":
                        report.skipped.append(SkippedFile(rel, looked.reason))
                    elif looked.kind in ("same", "touch"):
                        if looked.kind == "touch" and state is not None:
                            self.store.touch_document(state.id, f.size, f.mtime_ns)
                        report.unchanged += 1
                    elif looked.kind == "excluded":  # rag: false
                        report.excluded.append(rel)
                    elif looked.pending is not None:
                        batch.append(looked.pending)
                        batch_chunks += len(looked.pending.chunks)
                        if batch_chunks >= self.settings.embed.batch_size * 4:
                            self._write(batch, report)
                            batch, batch_chunks = [], 0
                            published = self._publish(published)
        finally:
            if threads > 1:
                trim_workers(keep=1)
        self._write(batch, report)
        self._report("index", len(files), len(files), None)

    def _finish(self, plan: SyncPlan, started: float, fresh: bool) -> None:
        """Remove what is gone, record the counts, the skips and the build."""
        report, files, collection = plan.report, plan.files, plan.collection
        record_scripts(self.store, self._scripts, fresh)
        if self.analyzer is not None:
            record_languages(self.store, self.analyzer, self._languages, fresh)
        gone = _gone(plan, report.excluded)
        self.store.delete_documents([s.id for s in gone])
        report.removed = [s.path for s in gone]
        self.store.gc_vectors()
        self.store.commit()
        seen: set[str] | None = None
        if plan.changed is not None:  # the other files' skip records stay
            kept = changes.merged_skips(self.store, collection, plan.mounts, plan.changed, report.skipped)
            seen = changes.changed_paths(plan.mounts, plan.changed)
        else:
            kept = skip_records(self.store, collection, report, files, plan.within)
            seen = None if plan.within is None else {*files, *report.removed}
        self.store.set_skipped(collection, kept)
        record_excluded(self.store, collection, report.excluded, files, seen)
        report.seconds = time.time() - started
        self.store.record_build(
            BuildRecord(
                collection, started, time.time(), report.git_commit, report.git_dirty,
                len(report.added), len(report.updated), len(report.removed), report.unchanged,
                len(report.skipped), "ok",
            )
        )  # fmt: skip

    def forget(self, collection: str, path: str) -> list[str]:
        """Remove one document (by path relative to its root) or every document under a root."""
        return self._locked(lambda: self._forget(collection, path), collection)

    def _forget(self, collection: str, path: str) -> list[str]:
        target = Path(path).expanduser()
        roots = self.store.collection_roots(collection)
        found = mounts(self.store, collection, roots)
        states = self.store.document_states(collection)
        root = None
        if target.is_absolute() and str(target.resolve()) in roots:
            root = str(target.resolve())
            gone = [s for s in states.values() if owner(roots, s.root, s.path) == root]
        else:
            state = states.get(self._relative(target, found))
            gone = [state] if state else []
        self._confirm(collection, [s.path for s in gone], root)
        if root is not None:
            self.store.set_collection_roots(collection, [r for r in roots if r != root])
            held = states.keys() - {s.path for s in gone}
            mine = next(m for m in found if str(m.root) == root)
            left = [m for m in found if m is not mine]
            self.store.set_skipped(collection, skips_left(self.store, collection, mine, left, held))
            record_named(self.store, collection, {str(m.root) for m in left if m.named})
        self.store.delete_documents([s.id for s in gone])
        self.store.commit()
        return [s.path for s in gone]

    def reembed(self) -> int:
        """Embed every stored chunk again with the configured model (after a model change).

        The old vectors stay in use until the new ones are all in; a re-embed stopped part-way is
        continued by the next ``reembed`` or ``sync`` with this model. Returns vectors computed."""
        return self._locked(lambda: self._reembed())

    def _reembed(self) -> int:
        return reembed_store(self.store, self.embedder, self.settings.embed.batch_size * 4, self.progress)

    # ----- internals -----
    def _confirm(self, collection: str, paths: list[str], root: str | None) -> None:
        """Asked even when nothing would go, so that a dry run (a ``confirm`` that notes the paths
        and says no) stops here, before any write, whatever the plan."""
        if self.confirm is not None and not self.confirm(collection, paths, root):
            what = f"the root {root}" if root else f"{len(paths)} documents"
            raise DeclinedError(
                f"the user declined removing {what} from collection {collection!r}; nothing changed"
            )

    def _publish(self, last: float) -> float:
        """Make the documents swapped in so far visible to keyword search every few seconds of a
        long sync (readers are not kept on the old keyword index until the job ends)."""
        now = time.monotonic()
        if now - last < _PUBLISH_S:
            return last
        self.store.commit()
        return now

    @staticmethod
    def _relative(target: Path, found: Sequence[Mount]) -> str:
        """A document's stored path from the path given to forget: absolute, or already stored."""
        if target.is_absolute():
            located = locate(found, target.resolve())
            if located is not None:
                return located[1]
        return target.as_posix()

    def _prepare(
        self, collection: str, f: SourceFile, data: bytes, digest: str, is_new: bool
    ) -> Pending | None:
        return prepare(self.settings, self.registry, self.embedder, self.max_tokens,
                       collection, f, data, digest, is_new, self._portable)  # fmt: skip

    def _warm(self) -> None:
        """Load a local model on another thread while the files are read (a core the reading
        leaves free), once there is something to embed, so the embedding phase does not start
        by waiting for it."""
        warm = getattr(self.embedder, "warm", None)
        if not callable(warm) or self._warming is not None:
            return

        def run() -> None:
            try:
                warm()
            except Exception as exc:  # the embedding phase meets the same error and reports it
                log.debug("warming the model failed: %s", exc)

        self._warming = threading.Thread(target=run, name="docshelf-warm", daemon=True)
        self._warming.start()

    def _report(self, phase: str, done: int, total: int, current: str | None) -> None:
        if self._current:
            self.progress(phase, done, total, current=current)  # type: ignore[call-arg]
        else:
            self.progress(phase, done, total)

    def _write(self, batch: list[Pending], report: SyncReport) -> None:
        """Swap the batch in, each document whole, with the vectors its text already has (unchanged
        or moved text); the rest of its chunks wait for theirs (``embed_pending``)."""
        if not batch:
            return
        if self._warm_wanted:
            self._warm()
        known = self.store.cached_vectors([k for p in batch for k in p.texts])
        self.store.replace_documents(
            [Replacement(p.doc, p.chunks, _known(p, known), p.terms, p.analyzer) for p in batch]
        )
        for pending in batch:
            if pending.scripts is not None:
                _add_counts(self._scripts, pending.scripts)
            else:
                script_words((c.text for c in pending.chunks), self._scripts)
            if self.analyzer is not None:
                if pending.languages is not None and pending.analyzer == self.analyzer.fingerprint:
                    _add_counts(self._languages, pending.languages)
                else:
                    count_language(self.analyzer.language, [c.text for c in pending.chunks], self._languages)
            report.chunks_written += len(pending.chunks)
            (report.added if pending.is_new else report.updated).append(pending.doc.path)


def _known(pending: Pending, known: dict[str, Vectors]) -> dict[str, Vectors]:
    return {k: known[k] for k in pending.texts if k in known}


def _add_counts(into: dict[str, float], counts: dict[str, float]) -> None:
    for key, n in counts.items():
        into[key] = into.get(key, 0.0) + n


def _takes_current(progress: Callable[..., None]) -> bool:
    """Whether a progress callback takes the current file (a ``current`` keyword argument)."""
    try:
        inspect.signature(progress).bind("index", 0, 0, current=None)
    except (TypeError, ValueError):
        return False
    return True


def _gone(plan: SyncPlan, excluded: Sequence[str]) -> list[DocState]:
    """The stored documents a sync removes: their files are gone (or now excluded with rag: false).
    A file that now fails to parse keeps its old version (it is in ``files``, not gone), and so does
    one that exists but cannot be read now, or lies in a folder that cannot be listed."""
    unreadable = {name for _, result in plan.walked for name in result.unreadable}
    kept = set(plan.kept_roots)

    def not_kept(s: DocState) -> bool:
        return plan.folder(s.root, s.path) not in kept

    return [
        s for rel, s in plan.states.items()
        if (rel not in plan.files and not kept_by(unreadable, rel) and not_kept(s))
        or rel in excluded
    ]  # fmt: skip
