"""What a sync reports: its counts, skipped files and their kinds."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from docshelf.index.vectors import EmbedRun
from docshelf.types import SkippedFile

__all__ = ["SyncReport", "group_skipped", "reason_kind", "reason_of"]


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
    chunks_embedded: int = 0  # texts the model embedded (in its second phase, for any sync's chunks)
    seconds: float = 0.0  # both phases
    git_commit: str | None = None
    git_dirty: bool | None = None
    started: float = 0.0  # unix seconds
    keyword_seconds: float = 0.0  # until every new and changed file was keyword-searchable
    vectors: EmbedRun | None = None  # the second phase (None: not run, ``keyword_only``)
    vectors_missing: int = 0  # chunks of the index still without a vector when it ended

    @property
    def embedding_failed(self) -> dict[str, str]:
        """Documents ("collection/path") with chunks the model failed on, and why."""
        return {} if self.vectors is None else self.vectors.failed

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
            "keyword_seconds": round(self.keyword_seconds, 3),
            "embed_seconds": round(self.vectors.seconds, 3) if self.vectors else None,
            "vectors_filled": self.vectors.filled if self.vectors else 0,
            "vectors_missing": self.vectors_missing,
            "embedding_failed": self.embedding_failed,
            "embedding_elsewhere": bool(self.vectors and self.vectors.busy),
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


def reason_of(rel: str, exc: Exception) -> str:
    """The error's message without the path it starts with: the report names the file once."""
    message = str(exc)
    for prefix in (f"{rel}: ", f"{rel} "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message
