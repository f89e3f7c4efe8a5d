"""The Store protocol and the records it reads and writes."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from docshelf.embed.base import Vectors
from docshelf.errors import ConfigError
from docshelf.types import Chunk, SkippedFile

__all__ = [
    "PROGRESS_EVERY",
    "Alternatives",
    "BuildRecord",
    "Catalog",
    "DocState",
    "DocumentRecord",
    "History",
    "PendingVector",
    "Progress",
    "Replacement",
    "Retriever",
    "SearchFilter",
    "Store",
    "StoreStats",
    "TermAnalyzer",
    "TextSpan",
    "Unembedded",
    "Writer",
    "last_versions",
    "named_roots_key",
    "own_alternatives",
    "ready_vector",
    "report_progress",
    "simplify_glob",
]


class TextSpan(NamedTuple):
    """A chunk's text and where it lies in its document (what rebuilding the text needs)."""

    char_start: int
    char_end: int
    line_start: int
    line_end: int
    text: str


class TermAnalyzer(Protocol):
    """What a store needs from the keyword analyzer."""

    @property
    def fingerprint(self) -> str: ...
    def terms(self, text: str) -> list[str]: ...
    def chunk_terms(self, title: str | None, heading_path: Sequence[str], text: str) -> list[str]: ...


@dataclass(frozen=True)
class DocumentRecord:
    """One indexed file."""

    id: str
    collection: str
    root: str
    path: str  # relative to root, POSIX, NFC
    size: int
    mtime_ns: int
    content_hash: str
    file_type: str
    title: str | None = None
    tags: tuple[str, ...] = ()
    lifecycle: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    indexed_at: float = 0.0


@dataclass(frozen=True)
class DocState:
    """What sync needs to decide whether a file changed."""

    id: str
    path: str
    root: str
    size: int
    mtime_ns: int
    content_hash: str


_MAX_GLOB_CHARS = 1000
_MAX_GLOB_WILDCARDS = 100
_STARS = re.compile(r"\*{2,}")


def simplify_glob(glob: str) -> str:
    """``glob`` with each run of ``*`` made one (the same matches); ConfigError for a glob too
    long or too wild to be a real path pattern: Python's fnmatch takes seconds per path on those
    and PostgreSQL's regex engine refuses them, so both stores refuse them alike."""
    simple = _STARS.sub("*", glob)
    wild = sum(simple.count(c) for c in "*?[")
    if len(simple) > _MAX_GLOB_CHARS or wild > _MAX_GLOB_WILDCARDS:
        raise ConfigError(
            f"the path glob is too complex ({len(simple):,} characters, {wild:,} wildcards; at most "
            f"{_MAX_GLOB_CHARS:,} and {_MAX_GLOB_WILDCARDS}): use a pattern such as 'runbooks/*.md'"
        )
    return simple


@dataclass(frozen=True)
class Unembedded:
    """A stored chunk whose vector is not computed yet: keyword-searchable, not yet by meaning.

    A sync swaps documents in with the vectors it already has (unchanged text keeps its own) and
    embeds the rest afterwards; what it needs for that is here (the text is embedded as
    ``contextual_text(title, heading_path, text)``, which ``embed_key`` names)."""

    seq: int  # its place in the store's order: a page of them resumes after the last one's
    chunk_id: str
    doc_id: str
    collection: str
    path: str  # its document's
    embed_key: str
    title: str | None
    heading_path: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class SearchFilter:
    """Restrictions applied before ranking (``path_glob`` is simplified, or refused if too complex)."""

    collections: tuple[str, ...] = ()
    path_glob: str | None = None
    tags: tuple[str, ...] = ()  # any of these
    file_types: tuple[str, ...] = ()
    modified_after: float | None = None  # unix seconds
    modified_before: float | None = None
    include_superseded: bool = False

    def __post_init__(self) -> None:
        if self.path_glob:
            object.__setattr__(self, "path_glob", simplify_glob(self.path_glob))

    def needs_doc_ids(self) -> bool:
        """True when the filter cannot be expressed by collection and lifecycle alone."""
        return bool(
            self.path_glob
            or self.tags
            or self.file_types
            or self.modified_after is not None
            or self.modified_before is not None
        )


@dataclass(frozen=True)
class BuildRecord:
    """One sync run."""

    collection: str
    started_at: float
    finished_at: float | None
    git_commit: str | None
    git_dirty: bool | None
    added: int
    updated: int
    removed: int
    unchanged: int
    skipped: int
    status: str


@dataclass(frozen=True)
class StoreStats:
    """Counts for `status`."""

    # per collection: "documents", "chunks" and "embedded" (chunks whose vector is computed)
    collections: dict[str, dict[str, int]]
    documents: int
    chunks: int
    vectors: int
    size_bytes: int
    model: str | None
    dim: int | None
    generation: int
    keyword_generation: int | None
    # an unfinished re-embed: {"model", "dim", "staged" (chunks embedded so far), "chunks"}
    reembed: dict[str, Any] | None = None


class Catalog(Protocol):
    """Collections, documents and chunks: what the readers of an index look up."""

    data_dir: Path

    def model(self) -> tuple[str | None, int | None]: ...
    def check_model(self, name: str, dim: int) -> None: ...
    def generation(self) -> int: ...
    def get_meta(self, key: str) -> str | None: ...
    def collections(self) -> list[str]: ...
    def collection_roots(self, collection: str) -> list[str]: ...
    def document_states(self, collection: str) -> dict[str, DocState]: ...
    def document_page(self, after: str, limit: int) -> list[tuple[str, DocState]]:
        """Up to ``limit`` (collection, state) pairs with ids after ``after``, in id order."""
        ...

    def documents_below(self, collection: str, folder: str) -> bool:
        """Whether a document's path lies inside ``folder`` (a stored path, without the "/")."""
        ...

    def iter_documents(self, collection: str | None = None) -> Iterator[DocumentRecord]: ...
    def get_document(self, collection: str, path: str) -> DocumentRecord | None: ...
    def get_document_by_id(self, doc_id: str) -> DocumentRecord | None: ...
    def get_documents(self, doc_ids: Sequence[str]) -> dict[str, DocumentRecord]: ...
    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]: ...
    def document_chunks(self, doc_id: str) -> list[Chunk]: ...
    def chunks_of(self, doc_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        """Each document's chunks in order, for many documents in few reads (grep's verification)."""
        ...

    def chunk_texts(self, doc_ids: Sequence[str]) -> dict[str, list[TextSpan]]:
        """Each document's chunk texts and where they lie, without the rest of a Chunk: what grep
        reads of every document it scans."""
        ...

    def iter_chunks(self) -> Iterator[Chunk]: ...
    def stats(self) -> StoreStats: ...
    def missing_vectors(self, collections: Sequence[str] = ()) -> int:
        """Chunks (of these collections; none: of all) still without their vector (cheap at 0)."""
        ...

    def chunk_count(self, collections: Sequence[str] = ()) -> int:
        """Chunks of these collections (none: of all)."""
        ...

    def reembed_pending(self) -> dict[str, Any] | None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class Replacement:
    """A document's new version: its record, all its chunks, their vectors (by embed key), and
    the keyword terms of each chunk where they were made already (by the analyzer of the
    fingerprint ``analyzer``: a store of another analyzer makes its own)."""

    doc: DocumentRecord
    chunks: Sequence[Chunk]
    vectors: dict[str, Vectors]
    terms: Sequence[Sequence[str]] | None = None
    analyzer: str = ""

    def chunk_terms(self, analyzer: TermAnalyzer) -> Sequence[Sequence[str]]:
        """Each chunk's terms by ``analyzer``: the ones made already when they are its (as they are:
        this runs on the writer's thread, which the workers that made them set out to relieve)."""
        made = self.terms
        if made is not None and self.analyzer == analyzer.fingerprint and len(made) == len(self.chunks):
            return made
        title = self.doc.title
        return [analyzer.chunk_terms(title, c.heading_path, c.text) for c in self.chunks]


def last_versions(batch: Sequence[Replacement]) -> list[Replacement]:
    """The batch with each document once, in its last version (as swapping them one by one would)."""
    return list({r.doc.id: r for r in batch}.values())


class Writer(Protocol):
    """What a sync changes: documents swapped in batches, published by ``commit``."""

    def set_model(self, name: str, dim: int) -> None: ...
    # A re-embed keeps the old vectors until the new ones are all in: they are kept aside per chunk
    # (``stage_vectors``, resumable after a kill) and swapped in by one ``finish_reembed``.
    def begin_reembed(self, name: str, dim: int) -> None: ...
    def staged_keys(self, chunk_ids: Sequence[str]) -> dict[str, str]: ...
    def stage_vectors(self, rows: Sequence[tuple[str, str, Vectors]]) -> None: ...
    def finish_reembed(self, name: str, dim: int) -> int: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def set_collection_roots(self, collection: str, roots: Sequence[str]) -> None: ...
    def touch_document(self, doc_id: str, size: int, mtime_ns: int) -> None: ...
    def cached_vectors(self, keys: Sequence[str]) -> dict[str, Vectors]: ...
    # Chunks whose key has no vector in the store are kept as still to embed (a chunk's vector may
    # come later, by ``add_vectors``); a reader sees such a chunk by keyword only.
    def unembedded_chunks(self, after: int, limit: int) -> list[Unembedded]:
        """Up to ``limit`` chunks still without a vector, with ``seq`` above ``after``, in seq order."""
        ...

    def add_vectors(self, vectors: Mapping[str, Vectors]) -> int:
        """Give every chunk still without a vector whose embed key is in ``vectors`` that vector (one
        transaction); returns how many chunks got one. Keys no such chunk has are dropped."""
        ...

    # Each document is swapped whole (a reader sees all of its old chunks or all of its new ones);
    # a store may put the batch in one transaction. After an error, what was swapped may be none of
    # the batch or a part of it, never a part of one document.
    def replace_documents(self, batch: Sequence[Replacement]) -> None: ...
    def delete_documents(self, doc_ids: Sequence[str]) -> int: ...
    def gc_vectors(self) -> None: ...
    def commit(self) -> None: ...
    def end_write(self, failed: bool) -> None: ...
    # Held with the writer lock file: what keeps writers that share the store but not the data dir
    # (PostgreSQL, several machines) in turn, per collection (None: all of them); nothing more for a
    # store inside the data dir.
    def writer_guard(
        self, timeout_s: float, collection: str | None = None
    ) -> contextlib.AbstractContextManager[None]: ...
    def needs_keyword_rebuild(self) -> bool: ...
    def rebuild_keyword_index(self, progress: Progress | None = None) -> int: ...
    def compact(self) -> tuple[int, int]: ...


# (passages done, passages in all), called now and then while a long job runs
Progress = Callable[[int, int], None]


# every this many passages a keyword rebuild reports its progress
def named_roots_key(collection: str) -> str:
    """The meta key of the collection's folders whose documents are keyed under the folder's name
    (docshelf.index.mounts): part of the index, so a copy of the store carries it."""
    return f"named/{collection}"


PROGRESS_EVERY = 2000


def report_progress(progress: Progress | None, done: int, total: int) -> None:
    """``progress(done, total)`` every PROGRESS_EVERY passages (the stores' keyword rebuilds)."""
    if progress is not None and done % PROGRESS_EVERY == 0:
        progress(done, total)


class PendingVector(Protocol):
    """A query vector still being computed (on another thread): a store that answers in-process
    runs its keyword side meanwhile and hands its hits over (the caller may use the wait on them);
    one that sends both sides in one round trip waits for it first, with no hits."""

    def __call__(self, keyword_hits: Sequence[tuple[str, float]] = ()) -> Vectors: ...


def ready_vector(
    query: Vectors | PendingVector | None, keyword_hits: Sequence[tuple[str, float]] = ()
) -> Vectors | None:
    """The vector itself, waiting for it if it is still being computed."""
    return query(keyword_hits) if callable(query) else query


# a query term -> other terms that may stand in for it: a word typed with accents also meets the
# pages that write it without; a chunk scores the best of them, never their sum (search/accents.py)
Alternatives = Mapping[str, Sequence[str]]


def own_alternatives(terms: Sequence[str], alternatives: Alternatives | None) -> dict[str, list[str]]:
    """The alternatives of ``terms``' own terms, without those that are query terms themselves
    (each store scores a query the same way, whatever the caller passed)."""
    own = set(terms)
    kept = {t: [a for a in dict.fromkeys(alts) if a not in own] for t, alts in (alternatives or {}).items()}
    return {t: alts for t, alts in kept.items() if t in own and alts}


class Retriever(Protocol):
    """The two retrievers and the filters applied before them."""

    def filter_doc_ids(self, flt: SearchFilter) -> list[str] | None: ...
    def without_vectors(self, chunk_ids: Sequence[str]) -> set[str]:
        """Those of ``chunk_ids`` whose vector is not computed yet (the dense side cannot rank them)."""
        ...

    def keyword_coverage(self, terms: Sequence[str]) -> float: ...
    def known_terms(self, terms: Sequence[str]) -> set[str]: ...  # those some chunk holds
    def keyword_search(
        self, terms: Sequence[str], k: int, flt: SearchFilter, alternatives: Alternatives | None = None
    ) -> list[tuple[str, float]]: ...
    def vector_search(self, query: Vectors, k: int, flt: SearchFilter) -> list[tuple[str, float]]: ...
    def grep_documents(self, pieces: Sequence[str], flt: SearchFilter) -> list[tuple[str, str, str]] | None:
        """(id, collection, path) of the documents passing ``flt`` in whose chunks each of ``pieces``
        (3+ characters, no blanks) occurs, ignoring case, in (collection, path) order: a superset of
        those a grep pattern with these pieces matches, found through a trigram index; no pieces:
        every document passing ``flt``. None when there is no such index to ask (the caller reads
        every document)."""
        ...

    def candidates(
        self, terms: Sequence[str], query: Vectors | PendingVector | None, k: int, flt: SearchFilter,
        keyword: bool = True, coverage: bool = False, alternatives: Alternatives | None = None,
    ) -> tuple[dict[str, list[tuple[str, float]]], float]:  # fmt: skip
        """Top-k of the keyword side (if ``keyword``) and the dense side (if ``query``), plus the
        share of ``terms`` found in the index (if ``coverage``); one round trip where the backend can.
        A pending ``query`` is waited for where the backend needs it (see ``PendingVector``).
        A term of ``alternatives`` scores as the best of it and its alternatives (BM25 of each)."""
        ...


class History(Protocol):
    """What `status` reports about past syncs."""

    def set_skipped(self, collection: str, skipped: Sequence[SkippedFile]) -> None: ...
    def skipped(self, collection: str | None = None) -> list[tuple[str, SkippedFile]]: ...
    def record_build(self, build: BuildRecord) -> None: ...
    def last_build(self, collection: str | None = None) -> BuildRecord | None: ...


class Store(Catalog, Writer, Retriever, History, Protocol):
    """Where documents, chunks and vectors live; the embedded and PostgreSQL backends implement it.

    ``data_dir`` is a local folder for this machine's state (writer lock, HTTP token, watcher
    health); with the embedded backend the index itself lives there too.
    """
