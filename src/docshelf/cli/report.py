"""What `index` and `status` say about a build: counts, skipped files grouped by reason, git state."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from docshelf.cli.output import data, name

if TYPE_CHECKING:
    from docshelf.shelf import IndexReport

__all__ = [
    "SHOWN_PER_REASON",
    "commit_line",
    "group_skipped",
    "index_summary",
    "skipped_lines",
    "skipped_summary",
    "vector_lines",
]

SHOWN_PER_REASON = 3  # paths named per reason where a summary names paths
KINDS_SHOWN = 4  # reason kinds named in the `index` summary line; `status --skipped` lists every file
FILES_NAMED = 3  # up to this many skipped files, the summary line names each


def _first(paths: Sequence[str], shown: int = SHOWN_PER_REASON) -> str:
    more = f", and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(paths[:shown]) + more


def group_skipped(skipped: Iterable[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """(path, reason) pairs by the indexer's reason kinds, the most common kind first."""
    from docshelf.shelf import SkippedFile
    from docshelf.shelf import group_skipped as by_kind

    reasons = dict(skipped)
    kinds = by_kind([SkippedFile(path, reason) for path, reason in reasons.items()])
    return {kind: [(path, reasons[path]) for path in paths] for kind, paths in kinds.items()}


def skipped_lines(skipped: Sequence[tuple[str, str]], shown: int | None = SHOWN_PER_REASON) -> list[Text]:
    """A line per reason with its count and first ``shown`` paths; ``shown=None``: every path on
    its own line with what is particular to it, the advice its reason shares said once."""
    lines = []
    for kind, items in group_skipped(skipped).items():
        lines.append(Text.assemble("  ", data(kind, "yellow"), f" ({len(items)})"))
        if shown is not None:
            lines[-1].append_text(name(": " + _first([path for path, _ in items], shown)))
            continue
        # "is not UTF-8 text (byte 0xe9 at 3); convert it ...": the advice after the last "; " once
        parts = [reason.rpartition("; ") for _, reason in items]
        advices = {advice for _, sep, advice in parts if sep}
        common = len(items) > 1 and len(advices) == 1 and all(sep for _, sep, _ in parts)
        if common:
            lines[-1].append_text(data(f": {advices.pop()}"))
        for (path, reason), (specific, _, _) in zip(items, parts, strict=True):
            own = specific if common else reason
            lines.append(Text.assemble(name(f"    {path}"), data("" if own == kind else f": {own}")))
    return lines


def vector_lines(missing: int, skipped: bool, failed: dict[str, str], elsewhere: bool) -> list[Text]:
    """What `index` says about the chunks still without a vector (keyword-searchable meanwhile)."""
    if not missing:
        return []
    if elsewhere:
        why = "another docshelf process is computing them"
    elif skipped:
        why = "`docshelf index` computes them (--keyword-only skipped that)"
    elif failed:
        reason, docs = next(iter(failed.values())), _first(list(failed))
        why = f"the model failed on some ({reason}) in {docs}; the next `docshelf index` retries"
    else:
        why = "the next `docshelf index` computes them"
    chunks = f"{missing} chunk{'' if missing == 1 else 's'}"
    return [data(f"{chunks} without a vector yet (found by keyword meanwhile): {why}", "yellow")]


def commit_line(commit: str | None, dirty: bool | None) -> Text | None:
    """The corpus's git commit, and a warning when its tree had uncommitted changes."""
    if not commit:
        return None
    line = Text.assemble("corpus at git commit ", data(commit[:12], "bold"))
    if dirty:
        line.append_text(
            data(" with uncommitted changes: the index holds the working tree, not that commit", "yellow")
        )
    return line


def skipped_summary(skipped: Sequence[tuple[str, str]], shown: int = KINDS_SHOWN) -> Text:
    """One line: how many were skipped and why (each file, if there are only a few; else the
    commonest kinds of reason with their counts), and how to see every file with its full reason
    (a re-sync of an unchanged tree printed a line per kind: 99 of them)."""
    groups = group_skipped(skipped)
    if len(skipped) <= FILES_NAMED:
        said = ", ".join(f"{path} ({kind})" for kind, items in groups.items() for path, _ in items)
    else:
        said = ", ".join(f"{kind} ({len(items)})" for kind, items in list(groups.items())[:shown])
        said += f", and {len(groups) - shown} more kinds" if len(groups) > shown else ""
    return Text.assemble(
        (f"{len(skipped)} skipped: ", "yellow"), name(said), ("; docshelf status --skipped lists them", "dim")
    )


def index_summary(done: IndexReport, skipped: bool = False) -> list[Text]:
    """The lines `index` ends with; ``skipped``: every skipped file with its reason."""
    r = done.sync
    # the time until everything was keyword-searchable too, when the vectors took long after it
    late = r.seconds - r.keyword_seconds >= 1
    first = f" (keyword-searchable after {r.keyword_seconds:.1f}s)" if late else ""
    lines = [
        Text.assemble(
            data(r.collection, "bold"),
            f": {len(r.added)} added, {len(r.updated)} updated, {len(r.removed)} removed, "
            f"{r.unchanged} unchanged; {r.chunks_written} chunk{'' if r.chunks_written == 1 else 's'} in "
            f"{r.seconds:.1f}s{first}",
        )
    ]
    busy = bool(r.vectors and r.vectors.busy)
    lines += vector_lines(r.vectors_missing, r.vectors is None, r.embedding_failed, busy)
    if r.excluded:
        lines.append(data(f"{len(r.excluded)} excluded (rag: false): {_first(r.excluded)}"))
    pairs = [(s.path, s.reason) for s in r.skipped]
    if pairs and skipped:
        lines.append(Text(f"{len(pairs)} skipped:", style="yellow"))
        lines += skipped_lines(pairs, shown=None)
    elif pairs:
        lines.append(skipped_summary(pairs))
    if (commit := commit_line(r.git_commit, r.git_dirty)) is not None:
        lines.append(commit)
    return lines
