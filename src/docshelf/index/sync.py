"""Sync: make the store match the files under a collection's roots, one safe swap per document."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from docshelf.chunk import LineIndex, chunk_document
from docshelf.config import Settings, check_collection
from docshelf.embed.base import Embedder, Vectors
from docshelf.errors import DocshelfError, ParseError, SourceError
from docshelf.index import changes
from docshelf.index.gitinfo import git_state
from docshelf.index.ids import chunk_ids, content_hash, document_id, embed_key
from docshelf.index.lock import WriterLock
from docshelf.index.pipeline import EmbedPipeline
from docshelf.index.reembed import reembed_store
from docshelf.index.scope import Scope, record_scripts, skip_records
from docshelf.parse import ParserRegistry, default_registry
from docshelf.parse.limits import Deadline
from docshelf.parse.worker import parse_isolated
from docshelf.search.confidence import script_words
from docshelf.sources import walk_roots
from docshelf.sources.mirror import source_metadata
from docshelf.sources.regular import FileRefused, read_regular
from docshelf.sources.walk import kept_by
from docshelf.store.base import BuildRecord, DocumentRecord, Store
from docshelf.types import Chunk, SkippedFile, SourceFile, contextual_text

__all__ = ["Indexer", "Progress", "SyncReport", "group_skipped", "reason_kind"]

log = logging.getLogger("docshelf.index")

Progress = Callable[[str, int, int], None]  # (phase, done, total)
_T = TypeVar("_T")

_PUBLISH_S = 2.0
# Tokens kept free for the title/heading header that contextual_text puts before a chunk.
_HEADER_RESERVE = 48


@dataclass
class SyncReport:
    """What one sync did."""

    collection: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    excluded: list[str] = field(default_factory=list)  # rag: false
    skipped: list[SkippedFile] = field(default_factory=list)
    chunks_written: int = 0
    chunks_embedded: int = 0
    seconds: float = 0.0
    git_commit: str | None = None
    git_dirty: bool | None = None

    def skipped_by_kind(self) -> dict[str, list[str]]:
        """Skipped paths grouped by the kind of reason ("binary file", "no parser for .xyz",
        "is password-protected", ...), most common first: the summary to print after the
        per-file lines."""
        return group_skipped(self.skipped)

    def as_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "added": len(self.added),
            "updated": len(self.updated),
            "removed": len(self.removed),
            "unchanged": self.unchanged,
            "excluded": self.excluded,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "skipped_by_kind": {kind: len(paths) for kind, paths in self.skipped_by_kind().items()},
            "chunks_written": self.chunks_written,
            "chunks_embedded": self.chunks_embedded,
            "seconds": round(self.seconds, 3),
            "git_commit": self.git_commit,
            "git_dirty": self.git_dirty,
        }


_KIND_END = re.compile(r" \(|; |: | - ")
_NUMBER = re.compile(r"(?<![\w.-])\d+(?:[.,]\d+)*(?!\w)")  # "3 pages", "62.3 MB"; not "UTF-8"


def reason_kind(reason: str) -> str:
    """The kind of a skip reason: its first clause, numbers generalised ("too large",
    "no parser for .rtf", "damaged or unreadable PDF", "no text")."""
    head = _KIND_END.split(reason, maxsplit=1)[0].strip()
    return _NUMBER.sub("N", head) or reason


def group_skipped(skipped: Sequence[SkippedFile]) -> dict[str, list[str]]:
    """Paths by reason kind, the most common kind first (ties by name)."""
    groups: dict[str, list[str]] = {}
    for s in skipped:
        groups.setdefault(reason_kind(s.reason), []).append(s.path)
    return dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def _reason(rel: str, exc: Exception) -> str:
    """The error's message without the path it starts with: the report names the file once."""
    message = str(exc)
    for prefix in (f"{rel}: ", f"{rel} "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


@dataclass
class _Pending:
    doc: DocumentRecord
    chunks: list[Chunk]
    texts: dict[str, str]  # embed key -> text to embed
    is_new: bool


class _Counter:
    """Adapts an Embedder to the chunker's TokenCounter; stops a file's chunking at its deadline
    (every count passes here, so no chunker loop can outlast parse.timeout_s)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.deadline: Deadline | None = None

    def count(self, text: str) -> int:
        if self.deadline is not None and self.deadline.remaining() <= 0.001:
            raise ParseError(
                f"{self.deadline.path}: chunking took over {self.deadline.seconds:g} s "
                "(parse.timeout_s); raise the limit or exclude the file"
            )
        return self.embedder.count_tokens(text)


def _tags(meta: dict[str, Any]) -> tuple[str, ...]:
    raw = meta.get("tags") or ()
    if isinstance(raw, str):
        raw = raw.split(",")
    return tuple(str(t).strip() for t in raw if str(t).strip())


class Indexer:
    """Runs syncs for one store and one embedder."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        settings: Settings,
        registry: ParserRegistry | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.registry = registry or default_registry(settings)
        self.progress = progress or (lambda phase, done, total: None)
        self.counter = _Counter(embedder)
        self._scripts: dict[str, float] = {}  # words per writing system swapped in (the "no match" note)
        self._pipeline = EmbedPipeline(store, embedder)
        self.max_tokens = max(16, min(settings.chunk.max_tokens, embedder.max_tokens - _HEADER_RESERVE))

    # ----- public -----
    def writer_lock(self) -> WriterLock:
        """The index's single-writer lock (waits up to ``watch.lock_timeout_s``)."""
        return WriterLock(self.store.data_dir, self.settings.watch.lock_timeout_s)

    def _locked(self, job: Callable[[], _T]) -> _T:
        with self.writer_lock():
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
    ) -> SyncReport:  # fmt: skip
        """Index new and changed files under the collection's roots; drop vanished ones.

        ``skipped`` (e.g. URLs that could not be fetched) is recorded with the files this sync
        skips, under the same writer lock; ``force`` re-parses unchanged files too (after the
        chunk or parse settings changed). ``scope`` (roots, folders or files inside them) limits
        the sync to what lies under those paths: other roots are neither walked nor pruned.
        ``changed`` (a watcher's events, absolute file paths): only these files are looked at,
        created, updated or removed.
        """
        check_collection(collection)
        return self._locked(lambda: self._sync(collection, roots, skipped, force, scope, changed))

    def _sync(
        self, collection: str, roots: Sequence[Path], skipped: Sequence[SkippedFile], force: bool,
        scope: Sequence[Path] | None = None, changed: Sequence[Path] | None = None,
    ) -> SyncReport:  # fmt: skip
        started = time.time()
        self._pipeline.reset()  # a batch left by a failed sync is not written
        unfinished = self.store.reembed_pending()
        wanted = (self.embedder.name, self.embedder.dim)
        if unfinished and (unfinished["model"], unfinished["dim"]) == wanted and self.store.model() != wanted:
            log.warning("continuing the interrupted re-embed with %s", self.embedder.name)
            self._reembed()
        self.store.check_model(self.embedder.name, self.embedder.dim)
        known = [Path(r) for r in self.store.collection_roots(collection)]
        # a root stored resolved that resolves elsewhere now was swapped for a link: not followed
        moved = [r for r in known if r.resolve() != r]
        given = [Path(r).expanduser().resolve() for r in roots]
        all_roots = list(dict.fromkeys([*(r for r in known if r not in moved), *given]))
        if not all_roots and not moved:
            raise SourceError(f"collection {collection!r} has no folders yet; run `docshelf index PATH`")
        src = self.settings.sources
        parseable = self._parseable
        within = None if scope is None else Scope(scope)
        if changed is not None:
            walked = changes.walk_changed(all_roots, changed, src, self.registry.binary_extensions, parseable)
            kept_roots = [str(r) for r in moved]
        else:
            walk_list = all_roots if within is None else [r for r in all_roots if within.touches(r)]
            walked = list(
                walk_roots(walk_list, src.include, src.exclude, src.respect_gitignore, src.max_file_mb,
                           self.registry.binary_extensions, parseable)
            )  # fmt: skip
            # a scoped sync keeps the roots it did not walk; walked roots take their resolved form
            resolved = dict(zip(walk_list, (r for r, _ in walked), strict=True))
            kept_roots = [str(r) for r in moved if r not in {w for w, _ in walked}]
            roots_now = [str(resolved.get(r, r)) for r in all_roots] + kept_roots
            self.store.set_collection_roots(collection, roots_now)
        self.store.set_model(self.embedder.name, self.embedder.dim)
        if self.store.needs_keyword_rebuild():
            log.warning("keyword index behind the database: rebuilding it from the database")
            self.store.rebuild_keyword_index()

        report = SyncReport(collection, skipped=list(skipped))
        report.skipped += [
            SkippedFile(r, f"the folder now points to {Path(r).resolve()}, not to the folder indexed; its "
                        f"documents are kept as indexed. To index what is there now: `docshelf forget {r}`, "
                        f"then `docshelf index {Path(r).resolve()}`")
            for r in kept_roots
        ]  # fmt: skip
        report.git_commit, report.git_dirty = git_state(walked[0][0]) if walked else (None, None)
        files: dict[str, SourceFile] = {}
        for _, result in walked:
            report.skipped.extend(result.skipped)
            for f in result.files:
                if within is not None and not within.holds(f.root / f.rel_path):
                    continue
                if self.registry.for_path(f.rel_path) is None:
                    report.skipped.append(
                        SkippedFile(
                            f.rel_path, f"no parser for {f.path.suffix or 'files without an extension'}"
                        )
                    )
                elif f.rel_path in files:
                    report.skipped.append(
                        SkippedFile(f.rel_path, f"same path already indexed from {files[f.rel_path].root}")
                    )
                else:
                    files[f.rel_path] = f

        if changed is not None:
            states = changes.changed_states(self.store, collection, all_roots, changed)
        else:
            states = self.store.document_states(collection)
        if within is not None:  # only what lies in the scope is compared (and may be removed)
            states = {rel: st for rel, st in states.items() if within.holds(Path(st.root) / st.path)}
        batch: list[_Pending] = []
        batch_chunks = 0
        published = time.monotonic()
        for done, (rel, f) in enumerate(sorted(files.items()), start=1):
            self.progress("index", done, len(files))
            time.sleep(0)  # hand the interpreter to waiting readers (a server's searches) once per file
            state = states.get(rel)
            same_root = state is not None and state.root == str(f.root)
            if state and not force and same_root and state.size == f.size and state.mtime_ns == f.mtime_ns:
                report.unchanged += 1
                continue
            try:  # regular files only, within the cap: the file may have changed since the walk
                data = read_regular(f.path, int(self.settings.sources.max_file_mb * 1_048_576))
            except FileRefused as exc:
                report.skipped.append(SkippedFile(rel, exc.reason))
                continue
            except OSError as exc:
                kept_note = "; its indexed version is kept" if state else ""
                report.skipped.append(SkippedFile(rel, f"cannot read: {exc.strerror}{kept_note}"))
                continue
            digest = content_hash(data)
            if state and not force and same_root and state.content_hash == digest:
                self.store.touch_document(state.id, f.size, f.mtime_ns)
                report.unchanged += 1
                continue
            try:
                pending = self._prepare(collection, f, data, digest, is_new=state is None)
            except DocshelfError as exc:
                report.skipped.append(SkippedFile(rel, _reason(rel, exc)))
                continue
            except Exception as exc:
                log.exception("unexpected error parsing %s", rel)
                report.skipped.append(SkippedFile(rel, f"parser failed: {type(exc).__name__}: {exc}"))
                continue
            if pending is None:  # rag: false
                report.excluded.append(rel)
                continue
            batch.append(pending)
            batch_chunks += len(pending.chunks)
            if batch_chunks >= self.settings.embed.batch_size * 4:
                self._submit(batch, report)  # embedded while the next batch is parsed
                batch, batch_chunks = [], 0
                published = self._publish(published)
        self._flush(batch, report)

        record_scripts(self.store, self._scripts)
        # a file that now fails to parse keeps its old version (it is in `files`, not gone), and so
        # does one that exists but cannot be read now, or lies in a folder that cannot be listed
        unreadable = {name for _, result in walked for name in result.unreadable}
        gone = [
            s for rel, s in states.items()
            if (rel not in files and not kept_by(unreadable, rel) and s.root not in kept_roots)
            or rel in report.excluded
        ]  # fmt: skip
        self.store.delete_documents([s.id for s in gone])
        report.removed = [s.path for s in gone]
        self.store.gc_vectors()
        self.store.commit()
        if changed is not None:  # the other files' skip records stay
            kept = changes.merged_skips(self.store, collection, all_roots, changed, report.skipped)
        else:
            kept = skip_records(self.store, collection, report, files, within)
        self.store.set_skipped(collection, kept)
        report.seconds = time.time() - started
        self.store.record_build(
            BuildRecord(
                collection, started, time.time(), report.git_commit, report.git_dirty,
                len(report.added), len(report.updated), len(report.removed), report.unchanged,
                len(report.skipped), "ok",
            )
        )  # fmt: skip
        return report

    def forget(self, collection: str, path: str) -> list[str]:
        """Remove one document (by path relative to its root) or every document under a root."""
        return self._locked(lambda: self._forget(collection, path))

    def _forget(self, collection: str, path: str) -> list[str]:
        target = Path(path).expanduser()
        roots = self.store.collection_roots(collection)
        if target.is_absolute() and str(target.resolve()) in roots:
            root = str(target.resolve())
            self.store.set_collection_roots(collection, [r for r in roots if r != root])
            gone = [s for s in self.store.document_states(collection).values() if s.root == root]
        else:
            rel = self._relative(target, roots)
            state = self.store.document_states(collection).get(rel)
            gone = [state] if state else []
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
    def _parseable(self, rel: str) -> bool:
        """A file with no parser is skipped by the walk unopened (a FIFO, /proc/kmsg would block)."""
        return self.registry.for_path(rel) is not None

    def _publish(self, last: float) -> float:
        """Make the documents swapped in so far visible to keyword search every few seconds of a
        long sync (readers are not kept on the old keyword index until the job ends)."""
        now = time.monotonic()
        if now - last < _PUBLISH_S:
            return last
        self.store.commit()
        return now

    @staticmethod
    def _relative(target: Path, roots: Sequence[str]) -> str:
        if target.is_absolute():
            resolved = target.resolve()
            for root in roots:
                try:
                    return resolved.relative_to(root).as_posix()
                except ValueError:
                    continue
        return target.as_posix()

    def _prepare(
        self, collection: str, f: SourceFile, data: bytes, digest: str, is_new: bool
    ) -> _Pending | None:
        limits = self.settings.parse
        if limits.isolate:
            parsed = parse_isolated(self.registry, data, f.rel_path, limits.timeout_s, limits.max_memory_mb)
        else:
            parsed = self.registry.parse(data, f.rel_path)
        self.counter.deadline = Deadline(f.rel_path, limits.timeout_s)  # chunking has the same limit
        meta = {**parsed.metadata, **source_metadata(f.root, f.rel_path)}  # fetched: its URL
        if meta.get("rag") is False:
            return None
        mode: Literal["auto", "headings"] = "headings" if meta.get("rag_chunk") == "headings" else "auto"
        try:
            spans = chunk_document(
                parsed, self.counter, self.max_tokens, self.settings.chunk.overlap_tokens, mode
            )
        finally:
            self.counter.deadline = None
        if not spans:  # an empty document would sit in the index matching nothing, unreported
            raise ParseError(
                f"{f.rel_path}: no text: the file holds nothing to index (empty, or only images, "
                "drawings or markup); add text or exclude it"
            )
        doc_id = document_id(collection, f.rel_path)
        lifecycle = meta.get("lifecycle")
        doc = DocumentRecord(
            id=doc_id,
            collection=collection,
            root=str(f.root),
            path=f.rel_path,
            size=f.size,
            mtime_ns=f.mtime_ns,
            content_hash=digest,
            file_type=parsed.file_type,
            title=parsed.title,
            tags=_tags(meta),
            lifecycle=str(lifecycle) if lifecycle is not None else None,
            metadata=meta,
            indexed_at=time.time(),
        )
        lines = LineIndex(parsed.text)
        texts = [parsed.text[s.start : s.end] for s in spans]
        chunks: list[Chunk] = []
        to_embed: dict[str, str] = {}
        ids = chunk_ids(doc_id, texts)
        for ordinal, (span, text, cid) in enumerate(zip(spans, texts, ids, strict=True)):
            embed_text = contextual_text(parsed.title, span.heading_path, text)
            key = embed_key(self.embedder.name, embed_text)
            to_embed[key] = embed_text
            chunks.append(
                Chunk(
                    id=cid, doc_id=doc_id, ordinal=ordinal, text=text, char_start=span.start,
                    char_end=span.end, line_start=lines.line_of(span.start),
                    line_end=lines.line_of(max(span.start, span.end - 1)),
                    heading_path=span.heading_path, page=span.page,
                    token_count=span.token_count, embed_key=key,
                )
            )  # fmt: skip
        return _Pending(doc, chunks, to_embed, is_new)

    def _embed(self, texts: dict[str, str]) -> dict[str, Vectors]:
        cached = self.store.cached_vectors(list(texts))
        missing = [k for k in texts if k not in cached]
        if missing:
            vectors = self.embedder.embed_documents([texts[k] for k in missing])
            cached.update(zip(missing, vectors, strict=False))
        return cached

    def _submit(self, batch: list[_Pending], report: SyncReport) -> None:
        """Embed ``batch`` in the background; the batch before it is swapped in meanwhile."""
        texts = {k: t for p in batch for k, t in p.texts.items()}
        self._pipeline.submit(texts, lambda vectors: self._write(batch, vectors, report))

    def _flush(self, batch: list[_Pending], report: SyncReport) -> None:
        """Embed a batch and swap it in (after the one in flight)."""
        if batch:
            self._submit(batch, report)
        self._pipeline.drain()

    def _write(self, batch: list[_Pending], vectors: dict[str, Vectors], report: SyncReport) -> None:
        """Swap each document in; isolate failures per document (embedded alone after a batch failed)."""
        for pending in batch:
            rel = pending.doc.path
            try:
                mine = {k: vectors[k] for k in pending.texts} if vectors else self._embed(pending.texts)
            except Exception as exc:
                log.warning("embedding failed for %s: %s", rel, exc)
                report.skipped.append(SkippedFile(rel, f"embedding failed, old version kept: {exc}"))
                continue
            self.store.replace_document(pending.doc, pending.chunks, mine)
            script_words((c.text for c in pending.chunks), self._scripts)
            report.chunks_written += len(pending.chunks)
            report.chunks_embedded += len(pending.texts)
            (report.added if pending.is_new else report.updated).append(rel)
