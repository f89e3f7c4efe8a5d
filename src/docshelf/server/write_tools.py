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

from docshelf.errors import DocshelfError, EmbedError, NotFoundError
from docshelf.server.app import ServerState
from docshelf.server.documents import find_document
from docshelf.server.limits import fit_items, tool_result
from docshelf.server.schemas import WriteReport
from docshelf.server.tools import tool

if TYPE_CHECKING:
    from docshelf.index.sync import Progress, SyncReport

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


async def _indexing(state: ServerState, ctx: Context, job: Callable[[Progress], T]) -> T:
    """Run an indexing job on a worker thread, reporting MCP progress; cancelling the request stops it
    at the next file (every document is swapped in its own transaction, so nothing is half-written)."""
    _, why = await anyio.to_thread.run_sync(lambda: state.embedder(None))
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

    def locked() -> T:
        with state.lock:
            try:
                return job(progress)
            except _Cancelled:
                state.store.commit()  # publish what was swapped in, so no keyword rebuild is needed
                raise

    try:
        return await anyio.to_thread.run_sync(locked, abandon_on_cancel=True)
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


def _report(action: str, reports: list[SyncReport], budget: int) -> dict[str, Any]:
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
        "note": None,
    }
    before = len(payload["skipped"]) + len(payload["removed_paths"])
    after = fit_items(payload, "skipped", budget // 2) + fit_items(payload, "removed_paths", budget // 2)
    if after < before:
        payload["note"] = "lists cut to stay under the size cap; index_status has the skipped files"
    return payload


def _ingest_target(state: ServerState, path: str, collection: str | None) -> tuple[str, list[Path]]:
    """The collection to sync and the new root (if any) for an ingest of ``path``."""
    from docshelf.sources.walk import is_within

    if "://" in path:
        raise DocshelfError(
            "URLs are not supported yet: save the file into an indexed folder, then call reindex"
        )
    target = Path(path).expanduser()
    if not target.is_absolute():
        raise DocshelfError(f"{path!r} is relative: pass the absolute path of a folder or file")
    target = target.resolve()
    if target.is_dir():
        return collection or state.settings.collection, [target]
    if target.is_file():
        for name in [collection] if collection else state.store.collections():
            if any(is_within(target, Path(r)) for r in state.store.collection_roots(name)):
                return name, []
        raise DocshelfError(
            f"{target} is not under an indexed folder; ingest the folder that holds it instead"
        )
    raise NotFoundError(f"{target} does not exist")


def register_write_tools(server: MCPServer, state: ServerState) -> None:
    """Register ingest, forget and reindex."""
    budget = state.settings.server.max_result_tokens

    async def finish(ctx: Context, payload: dict[str, Any]) -> CallToolResult:
        await _announce(ctx)
        return tool_result(payload)

    @tool(server, "Add documents", INDEXING)
    async def ingest(
        path: Annotated[str, Field(min_length=1, description="absolute path of a folder (or a file in one)")],
        ctx: Context,
        collection: Annotated[str | None, Field(description="collection to add it to")] = None,
    ) -> Annotated[CallToolResult, WriteReport]:
        """Index a folder (it becomes a root of the collection) or re-index one file under a known
        folder. Only unchanged files are skipped, so repeating it is cheap. Reports progress."""
        await state.opened()
        try:
            name, roots = _ingest_target(state, path, collection)
            report = await _indexing(state, ctx, lambda p: state.runtime.indexer(p).sync(name, roots))
        except (DocshelfError, _Cancelled) as exc:
            raise ToolError(str(exc) or "cancelled") from exc
        return await finish(ctx, _report("ingest", [report], budget))

    @tool(server, "Remove a document", REMOVING)
    async def forget(
        document: Annotated[str, Field(min_length=1, description="path, doc_id or docshelf:// URI")],
        ctx: Context,
        collection: Annotated[str | None, Field(description="collection, when a path is in several")] = None,
    ) -> Annotated[CallToolResult, WriteReport]:
        """Remove one document from the index (the file on disk is not touched). It comes back on
        the next reindex unless it is excluded in docshelf.toml or marked rag: false."""

        def work() -> dict[str, Any]:
            doc = find_document(state.store, document, collection)
            removed = state.runtime.indexer().forget(doc.collection, doc.path)
            return {
                "action": "forget", "collection": doc.collection, "removed": len(removed),
                "removed_paths": removed, "note": None,
            }  # fmt: skip

        try:
            await anyio.to_thread.run_sync(lambda: state.embedder(None))
            payload = await state.run(work)
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
        await state.opened()
        names = [collection] if collection else state.store.collections()
        if collection and collection not in state.store.collections():
            raise ToolError(f"no collection {collection!r}; see index_status")

        def job(progress: Progress) -> list[SyncReport]:
            return [state.runtime.indexer(progress).sync(name) for name in names]

        try:
            reports = await _indexing(state, ctx, job)
        except (DocshelfError, _Cancelled) as exc:
            raise ToolError(str(exc) or "cancelled") from exc
        return await finish(ctx, _report("reindex", reports, budget))
