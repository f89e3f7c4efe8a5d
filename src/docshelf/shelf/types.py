"""The shelf's request and response types: plain dataclasses, rendered by each front door."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from docshelf.types import Mode

if TYPE_CHECKING:
    from docshelf.index.sync import SyncReport
    from docshelf.store.base import BuildRecord, DocumentRecord, SearchFilter
    from docshelf.types import Chunk

__all__ = [
    "MAX_K",
    "CollectionStatus",
    "ForgetReport",
    "GrepCount",
    "GrepMatch",
    "GrepOutput",
    "GrepRequest",
    "GrepResult",
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
MAX_GREP = 10_000  # matching lines (or documents) one grep call returns at most
MAX_CONTEXT = 20  # context lines on each side of a grep match
# "content": the matching lines; "files_with_matches": the documents only; "count": lines per document
GrepOutput = Literal["content", "files_with_matches", "count"]


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
        return _filter_of(self)


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
    # the roots whose files are cited under the folder's name ("work/"), by root
    cited_under: dict[str, str] = field(default_factory=dict)

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
            "cited_under": self.cited_under,
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


@dataclass(frozen=True)
class GrepRequest:
    """One grep: a literal phrase (blanks match any run of blanks or line breaks) or, with ``regex``,
    an RE2 regular expression, over the documents the filters leave."""

    pattern: str
    regex: bool = False
    ignore_case: bool = True
    word: bool = False  # only matches with no letter, digit or underscore right before or after
    collections: tuple[str, ...] = ()
    path_glob: str | None = None
    tags: tuple[str, ...] = ()
    file_types: tuple[str, ...] = ()
    include_superseded: bool = False
    output: GrepOutput = "content"
    context: int = 0  # lines before and after each match
    max_results: int = 100  # matching lines ("content"), else documents, per call
    cursor: str | None = None  # from the previous call's result: go on where it stopped
    time_limit_s: float = 10.0  # reading the documents stops here (the cursor goes on)

    def __post_init__(self) -> None:
        from docshelf.errors import ConfigError

        for name in ("collections", "tags", "file_types"):
            if isinstance(getattr(self, name), str):
                object.__setattr__(self, name, (getattr(self, name),))
        if self.output not in ("content", "files_with_matches", "count"):
            raise ConfigError(f"output must be content, files_with_matches or count, not {self.output!r}")
        if not 0 <= self.context <= MAX_CONTEXT:
            raise ConfigError(f"context counts lines, 0 to {MAX_CONTEXT}, not {self.context}")
        if not 1 <= self.max_results <= MAX_GREP:
            raise ConfigError(f"max_results must be between 1 and {MAX_GREP}, not {self.max_results}")
        if not self.time_limit_s > 0:
            raise ConfigError(f"time_limit_s must be above 0 seconds, not {self.time_limit_s}")

    def filter(self) -> SearchFilter:
        return _filter_of(self)


@dataclass(frozen=True)
class GrepMatch:
    """A line that matches (several lines when a match spans a line break), where it is, and the
    spans of the matches in it."""

    citation: str  # path:LINE, or file.pdf#page=N for a PDF (``line`` is then within the page)
    collection: str
    path: str
    line: int  # 1-based: in the document, or within the page for a PDF
    page: int | None
    heading_path: tuple[str, ...]
    text: str  # the line; a very long one is cut around its first match (marked with "…")
    spans: tuple[tuple[int, int], ...]  # [start, end) of each match in ``text``
    before: tuple[str, ...] = ()  # context lines
    after: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "citation": self.citation, "collection": self.collection, "path": self.path,
            "line": self.line, "page": self.page, "heading_path": list(self.heading_path),
            "text": self.text, "spans": [list(s) for s in self.spans],
            "before": list(self.before), "after": list(self.after),
        }  # fmt: skip


@dataclass(frozen=True)
class GrepCount:
    """How many lines of one document match."""

    collection: str
    path: str
    lines: int

    def as_dict(self) -> dict[str, Any]:
        return {"collection": self.collection, "path": self.path, "lines": self.lines}


@dataclass
class GrepResult:
    """What one grep call found: matching lines (``content``), and per document the count of
    matching lines, for every document read in this call; ``cursor`` goes on where the cap or the
    time limit stopped it."""

    pattern: str
    matches: list[GrepMatch]
    counts: list[GrepCount]
    cursor: str | None = None
    note: str | None = None
    scanned: bool = False  # no piece to look up: every document was read, within time_limit_s
    timed_out: bool = False  # the time limit stopped it (the cursor goes on)
    documents_read: int = 0

    @property
    def total_lines(self) -> int:
        return sum(c.lines for c in self.counts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "matches": [m.as_dict() for m in self.matches],
            "counts": [c.as_dict() for c in self.counts],
            "total_lines": self.total_lines,
            "documents_read": self.documents_read,
            "cursor": self.cursor,
            "note": self.note,
            "scanned": self.scanned,
            "timed_out": self.timed_out,
        }


def _filter_of(request: SearchRequest | GrepRequest) -> SearchFilter:
    """The store's filter for the documents a search or a grep asks for (the same fields in both)."""
    from docshelf.store.base import SearchFilter

    return SearchFilter(
        collections=tuple(request.collections), path_glob=request.path_glob, tags=tuple(request.tags),
        file_types=tuple(request.file_types), include_superseded=request.include_superseded,
    )  # fmt: skip
