"""The write tools (left out with --read-only): ingest, forget, reindex; MCP progress, cancellable."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from docshelf.errors import DocshelfError, EmbedError
from docshelf.server.calls import off_loop
from docshelf.server.limits import fit_items, tool_result
from docshelf.server.schemas import WriteReport
from docshelf.server.tools import tool

if TYPE_CHECKING:
    from docshelf.index.sync import Progress
    from docshelf.shelf import IndexReport, Shelf

__all__ = ["register_write_tools"]

log = logging.getLogger("docshelf.server")
T = TypeVar("T")

INDEXING = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
REMOVING = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


class _Cancelled(Exception):
    """Raised inside the indexing thread once the request was cancelled."""


async def _indexing(shelf: Shelf, ctx: Context, job: Callable[[Progress], T]) -> T:
    """Run an indexing job on a worker thread, reporting MCP progress; cancelling the request stops it
    at the next file (every document is swapped in its own transaction, so nothing is half-written)."""
    await shelf.opened()
    _, why = await anyio.to_thread.run_sync(lambda: shelf.embedder(None))
    if why:
        raise EmbedError(f"cannot index: {why}")
    cancel = threading.Event()
    last = [0.0]

    def progress(phase: str, done: int, total: int) -> None:
        if cancel.is_set():
            raise _Cancelled
        now = time.monotonic()
        if now - last[0] < 0.1 and done < total:
            return  # a notification per file would flood the client
        last[0] = now
        try:
            anyio.from_thread.run(ctx.report_progress, done, total, f"{phase}: {done}/{total} files")
        except Exception:  # progress is best effort; the work goes on
            log.debug("progress report failed", exc_info=True)

    def run() -> T:
        return job(progress)  # a cancel ends the sync, which publishes what was swapped in

    try:
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        cancel.set()
        raise


async def _announce(ctx: Context) -> None:
    """Tell clients the document set changed: listen streams (2026) and the session (2025)."""
    for send in (ctx.notify_resources_changed, ctx.session.send_resource_list_changed):
        try:
            await send()
        except Exception:
            log.debug("list_changed not sent", exc_info=True)


def _report(action: str, done: list[IndexReport], budget: int) -> dict[str, Any]:
    reports = [d.sync for d in done]
    payload: dict[str, Any] = {
        "action": action,
        "collection": ", ".join(r.collection for r in reports) or None,
        "added": sum(len(r.added) for r in reports),
        "updated": sum(len(r.updated) for r in reports),
        "removed": sum(len(r.removed) for r in reports),
        "unchanged": sum(r.unchanged for r in reports),
        "skipped": [{"path": s.path, "reason": s.reason} for r in reports for s in r.skipped],
        "removed_paths": [p for r in reports for p in r.removed],
        "seconds": round(sum(r.seconds for r in reports), 3),
        "settings_changes": [c for d in done for c in d.settings_changes],
        "note": "; ".join(n for d in done for n in d.notes) or None,
    }
    before = len(payload["skipped"]) + len(payload["removed_paths"])
    after = fit_items(payload, "skipped", budget // 2) + fit_items(payload, "removed_paths", budget // 2)
    if after < before:
        payload["note"] = "lists cut to stay under the size cap; index_status has the skipped files"
    return payload


def _check_target(path: str) -> str:
    """An ingest target as the server accepts it: an http(s) URL or an absolute path."""
    from docshelf.sources.remote import is_url

    if is_url(path):
        return path
    if not Path(path).expanduser().is_absolute():
        raise DocshelfError(f"{path!r} is relative: pass the absolute path of a folder or file, or a URL")
    return path


def register_write_tools(server: MCPServer, shelf: Shelf) -> None:
    """Register ingest, forget and reindex."""
    budget = shelf.settings.server.max_result_tokens

    async def finish(ctx: Context, payload: dict[str, Any]) -> CallToolResult:
        await _announce(ctx)
        return tool_result(payload)

    @tool(server, "Add documents", INDEXING)
    async def ingest(
        path: Annotated[
            str,
            Field(
                min_length=1, description="absolute path of a folder (or a file in one), or an http(s) URL"
            ),
        ],
        ctx: Context,
        collection: Annotated[str | None, Field(description="collection to add it to")] = None,
    ) -> Annotated[CallToolResult, WriteReport]:
        """Index a folder (it becomes a root of the collection), a web page or public Google Drive
        link, or re-index one file under a known folder. Unchanged files are skipped, so repeating it
        is cheap. Reports progress."""
        try:
            target = _check_target(path)
            report = await _indexing(shelf, ctx, lambda p: shelf.index([target], collection, progress=p))
        except (DocshelfError, _Cancelled) as exc:
            raise ToolError(str(exc) or "cancelled") from exc
        return await finish(ctx, _report("ingest", [report], budget))

    @tool(server, "Remove a document", REMOVING)
    async def forget(
        document: Annotated[str, Field(min_length=1, description="path, doc_id or docshelf:// URI")],
        ctx: Context,
        collection: Annotated[str | None, Field(description="collection, when a path is in several")] = None,
    ) -> Annotated[CallToolResult, WriteReport]:
        """Remove one document from the index (the file on disk is not touched), or a whole root
        folder given by its absolute path. A document comes back on the next reindex unless it is
        excluded in docshelf.toml or marked rag: false."""

        def work() -> dict[str, Any]:
            done = shelf.forget(document, collection)
            return {
                "action": "forget", "collection": done.collection, "removed": len(done.removed),
                "removed_paths": done.removed, "note": None,
            }  # fmt: skip

        try:
            await anyio.to_thread.run_sync(lambda: shelf.embedder(None))
            payload = await off_loop(shelf, work)
        except DocshelfError as exc:
            raise ToolError(str(exc)) from exc
        return await finish(ctx, payload)

    @tool(server, "Re-index", INDEXING)
    async def reindex(
        ctx: Context,
        collection: Annotated[str | None, Field(description="only this collection")] = None,
    ) -> Annotated[CallToolResult, WriteReport]:
        """Bring the index up to date with the files on disk: new and changed files are indexed,
        vanished ones dropped. Incremental and safe to repeat. Reports progress; can be cancelled."""

        def job(progress: Progress) -> list[IndexReport]:
            return shelf.reindex(collection, progress)

        try:
            reports = await _indexing(shelf, ctx, job)
        except (DocshelfError, _Cancelled) as exc:
            raise ToolError(str(exc) or "cancelled") from exc
        return await finish(ctx, _report("reindex", reports, budget))
