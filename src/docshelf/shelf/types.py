"""The shelf's request and response types: plain dataclasses, rendered by each front door."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from docshelf.types import Mode

if TYPE_CHECKING:
    from docshelf.index.sync import SyncReport
    from docshelf.store.base import BuildRecord, DocumentRecord, SearchFilter
    from docshelf.types import Chunk

__all__ = [
    "MAX_K",
    "CollectionStatus",
    "ForgetReport",
    "IndexReport",
    "Mode",
    "Passage",
    "PassageWindow",
    "SearchRequest",
    "Status",
    "TextRange",
    "iso",
]

MAX_K = 1000  # hits one search returns at most


def iso(ts: float | None) -> str | None:
    """UTC ISO-8601 seconds, or None."""
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class SearchRequest:
    """One search: the query, how many hits, which retrievers and which documents."""

    query: str
    k: int | None = None  # None: search.k
    mode: Mode | None = None  # None: search.mode
    collections: tuple[str, ...] = ()
    path_glob: str | None = None
    tags: tuple[str, ...] = ()
    file_types: tuple[str, ...] = ()
    include_superseded: bool = False
    rerank: bool | None = None  # None: rerank.enabled
    model_wait_s: float | None = None  # wait at most this long for the model, then keyword-only
    min_confidence: float | None = None  # leave out hits below this calibrated confidence (0-1)

    def __post_init__(self) -> None:
        from docshelf.errors import ConfigError

        # one name where a tuple is asked for: ("samples",), not the letters of "samples"
        for name in ("collections", "tags", "file_types"):
            if isinstance(getattr(self, name), str):
                object.__setattr__(self, name, (getattr(self, name),))
        if self.k is not None and not 1 <= self.k <= MAX_K:
            raise ConfigError(f"k must be between 1 and {MAX_K}, not {self.k}")
        if self.mode is not None and self.mode not in ("hybrid", "keyword", "semantic"):
            raise ConfigError(f"mode must be hybrid, keyword or semantic, not {self.mode!r}")
        if self.min_confidence is not None and not 0 <= self.min_confidence <= 1:
            raise ConfigError(f"min_confidence is a share between 0 and 1, not {self.min_confidence}")

    def filter(self) -> SearchFilter:
        from docshelf.store.base import SearchFilter

        return SearchFilter(
            collections=tuple(self.collections), path_glob=self.path_glob, tags=tuple(self.tags),
            file_types=tuple(self.file_types), include_superseded=self.include_superseded,
        )  # fmt: skip


@dataclass(frozen=True)
class Passage:
    """One stored chunk with its citation."""

    chunk: Chunk
    citation: str
    is_target: bool = False


@dataclass(frozen=True)
class PassageWindow:
    """A search hit's passage and its neighbours, in document order."""

    document: DocumentRecord
    passages: list[Passage]


@dataclass(frozen=True)
class TextRange:
    """A line, character or page range of a document's text, as the indexer saw it."""

    document: DocumentRecord
    text: str
    source: str  # "file" | "index" (rebuilt from chunks: the file is gone or unreadable)
    char_start: int
    char_end: int
    line_start: int
    line_end: int
    total_chars: int
    total_lines: int
    citation: str
    note: str | None = None
    rest: tuple[int, int] | None = None  # (start, end) chars left out by max_tokens


@dataclass
class IndexReport:
    """What one `index` run did: the sync of one collection plus fetching and settings."""

    sync: SyncReport
    fetched: int = 0
    fetch_unchanged: int = 0
    settings_origin: str | None = None
    settings_changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.sync.as_dict(),
            "fetched": self.fetched,
            "settings_origin": self.settings_origin,
            "settings_changes": self.settings_changes,
            "notes": self.notes,
        }


@dataclass(frozen=True)
class ForgetReport:
    """Documents removed by one `forget`."""

    collection: str
    removed: list[str]
    root: str | None = None  # set when a whole root folder (or URL mirror) was removed


def build_dict(build: BuildRecord | None) -> dict[str, Any] | None:
    if build is None:
        return None
    return {
        "collection": build.collection,
        "finished_at": iso(build.finished_at or build.started_at),
        "git_commit": build.git_commit,
        "git_dirty": build.git_dirty,
        "added": build.added,
        "updated": build.updated,
        "removed": build.removed,
        "unchanged": build.unchanged,
        "skipped": build.skipped,
    }


@dataclass
class CollectionStatus:
    name: str
    documents: int
    chunks: int
    roots: list[str]
    last_build: BuildRecord | None
    settings: dict[str, Any] | None  # the recorded settings that shape this collection
    settings_origin: str | None
    embedded: int | None = None  # chunks whose vector is computed (None: not counted)

    @property
    def vector_share(self) -> float:
        """The share of its chunks semantic search covers (1.0 with no chunks or none counted)."""
        if self.embedded is None or not self.chunks:
            return 1.0
        return self.embedded / self.chunks

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "documents": self.documents,
            "chunks": self.chunks,
            "embedded": self.chunks if self.embedded is None else self.embedded,
            "vector_share": round(self.vector_share, 4),
            "roots": self.roots,
            "last_build": build_dict(self.last_build),
            "settings": self.settings,
            "settings_origin": self.settings_origin,
        }


@dataclass
class Status:
    """What is indexed, with which model, how fresh, and what was skipped: one shape for every door."""

    data_dir: str
    store: str
    model: str | None
    dim: int | None
    documents: int
    chunks: int
    vectors: int
    size_bytes: int
    keyword_index_in_sync: bool
    collections: list[CollectionStatus]
    last_build: BuildRecord | None
    skipped: list[dict[str, str]]
    stale: list[dict[str, str]]
    stale_documents: int
    index_age: float | None
    watch: dict[str, dict[str, Any]]
    index_settings: dict[str, Any] | None = None
    reembed: dict[str, Any] | None = None  # an unfinished re-embed: model, dim, staged, chunks
    new_files: int = 0  # files a sync would add (listed in ``stale`` with reason "new")

    def as_dict(self) -> dict[str, Any]:
        return {
            "data_dir": self.data_dir,
            "store": self.store,
            "model": self.model,
            "dim": self.dim,
            "documents": self.documents,
            "chunks": self.chunks,
            "vectors": self.vectors,
            "size_bytes": self.size_bytes,
            "keyword_index_in_sync": self.keyword_index_in_sync,
            "index_settings": self.index_settings,
            "collections": [c.as_dict() for c in self.collections],
            "last_build": build_dict(self.last_build),
            "skipped": self.skipped,
            "stale_documents": self.stale_documents,
            "new_files": self.new_files,
            "stale": self.stale,
            "index_age": self.index_age,
            "watch": self.watch,
            "reembed_pending": self.reembed,
        }
