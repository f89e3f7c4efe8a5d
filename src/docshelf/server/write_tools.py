"""The write tools (left out with --read-only): ingest, forget, reindex; MCP progress, cancellable."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Resolve
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from docshelf.errors import DeclinedError, DocshelfError, EmbedError
from docshelf.server.calls import no_index_message, off_loop, tool
from docshelf.server.confirm import (
    Planned,
    Removal,
    ask_forget,
    ask_ingest,
    ask_reindex,
    bind,
    guard,
    plan_forget,
    plan_ingest,
    plan_reindex,
)
from docshelf.server.instructions import refresh_instructions
from docshelf.server.limits import fit_items, tool_result
from docshelf.server.notices import Notices
from docshelf.server.schemas import WriteReport
from docshelf.shelf import join_notes

if TYPE_CHECKING:
    from docshelf.server.feed import StatusFeed
    from docshelf.shelf import IndexReport, Progress, Shelf

__all__ = ["register_write_tools"]

log = logging.getLogger("docshelf.server")
T = TypeVar("T")

# ingest and reindex delete too (files gone from disk leave the index), so all three are destructive;
# ingest of a URL reaches the web
INGESTING = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
)
REMOVING = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


class _Cancelled(Exception):
    """Raised inside the indexing thread once the request was cancelled."""


async def _indexing(shelf: Shelf, ctx: Context, job: Callable[[Progress], T]) -> T:
    """Run an indexing job on a worker thread, reporting MCP progress; cancelling the request stops it
    at the next file (every document is swapped in its own transaction, so nothing is half-written).

    The worker never calls into the event loop: it records how far it got and a task here sends
    the progress. A cancelled request waits (shielded) for the worker to stop, so when the call is
    over the writer lock and the keyword writer are released and the index is consistent.
    """
    await shelf.opened()
    why = await anyio.to_thread.run_sync(shelf.wait_for_model)
    if why:
        raise EmbedError(f"cannot index: {why}")
    cancel = threading.Event()
    state: list[tuple[str, int, int]] = []

    def progress(phase: str, done: int, total: int) -> None:
        if cancel.is_set():
            raise _Cancelled
        state[:] = [(phase, done, total)]

    async def report() -> None:
        sent = None
        while True:
            await anyio.sleep(0.1)  # a notification per file would flood the client
            now = state[0] if state else None
            if now is not None and now != sent:
                sent = now
                phase, done, total = now
                try:
                    unit = "files" if phase == "index" else "chunks"  # "vectors", "reembed"
                    await ctx.report_progress(done, total, f"{phase}: {done}/{total} {unit}")
                except Exception:  # progress is best effort; the work goes on
                    log.debug("progress report failed", exc_info=True)

    finished = threading.Event()
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("ok", job(progress)))
        except BaseException as exc:
            outcome.append(("error", exc))
        finally:
            finished.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(report)
        try:
            await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            cancel.set()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(finished.wait)
            raise
        finally:
            tg.cancel_scope.cancel()
    kind, value = outcome[0]
    if kind == "error":
        raise value
    if state and state[0][1] == state[0][2]:  # the last count, so a client sees done == total
        with contextlib.suppress(Exception):
            await ctx.report_progress(state[0][1], state[0][2], f"{state[0][0]}: done")
    result: T = value
    return result


async def _announce(
    server: MCPServer, shelf: Shelf, feed: StatusFeed, ctx: Context, payload: dict[str, Any]
) -> None:
    """After a write that changed something: fresh instructions, `docshelf://status` updated for
    its subscribers, and log notices (what changed, what was skipped). Nothing when nothing changed:
    the resource list itself (status + the document template) never changes, so no list_changed."""
    notices = Notices.of(ctx)
    changed = any(payload.get(key) for key in ("added", "updated", "removed"))
    if changed:
        refresh_instructions(server, shelf)
        await feed.changed()
    if notices is None:
        return
    if changed:
        counts = ", ".join(f"{payload.get(k, 0)} {k}" for k in ("added", "updated", "removed"))
        await notices.send(ctx, "info", f"{payload['action']}: the index changed ({counts})")
    skipped = payload.get("skipped") or []
    if skipped:
        shown = "; ".join(f"{s['path']} ({s['reason']})" for s in skipped[:10])
        more = f"; and {len(skipped) - 10} more (see index_status)" if len(skipped) > 10 else ""
        await notices.send(ctx, "warning", f"{payload['action']} skipped {len(skipped)} files: {shown}{more}")
    await notices.deliver(ctx)


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
        cut = "lists cut to stay under the size cap; index_status has the skipped files"
        payload["note"] = join_notes(payload["note"], cut)
    return payload


def register_write_tools(server: MCPServer, shelf: Shelf, feed: StatusFeed) -> None:
    """Register ingest, forget and reindex."""
    budget = shelf.settings.server.max_result_tokens

    async def finish(ctx: Context, payload: dict[str, Any]) -> CallToolResult:
        await _announce(server, shelf, feed, ctx, payload)
        return tool_result(payload)

    def declined(action: str, exc: DeclinedError) -> CallToolResult:
        """Not an error: the user said no, and the index is as it was."""
        return tool_result({"action": action, "removed": 0, "note": str(exc)})

    bind(server, shelf)
    allowed = shelf.settings.server.allow_ingest

    @tool(server, "Add documents", INGESTING)
    async def ingest(
        path: Annotated[
            str,
            Field(
                min_length=1, description="absolute path of a folder (or a file in one), or an http(s) URL"
            ),
        ],
        ctx: Context,
        planned: Annotated[Planned, Resolve(plan_ingest)],
        consent: Annotated[ElicitationResult[Removal], Resolve(ask_ingest)],
        collection: Annotated[str | None, Field(description="default: the folder's own")] = None,
    ) -> Annotated[CallToolResult, WriteReport]:
        """Index exactly this folder, file, web page or public Google Drive link (nothing else is
        synced): a new folder becomes a root of its own collection. Only folders the user allowed
        (default: inside those already indexed). Files gone from it are dropped; unchanged ones are
        skipped. Reports progress; can be cancelled."""
        if not shelf.exists() and not allowed:
            raise ToolError(no_index_message(shelf))
        try:
            confirm = guard("ingest", planned, consent)
            report = await _indexing(
                shelf, ctx,
                lambda p: shelf.ingest(path, collection, allowed=allowed, progress=p, confirm=confirm),
            )  # fmt: skip
        except DeclinedError as exc:
            return declined("ingest", exc)
        except (DocshelfError, _Cancelled) as exc:
            raise ToolError(str(exc) or "cancelled") from exc
        return await finish(ctx, _report("ingest", [report], budget))

    @tool(server, "Remove a document", REMOVING)
    async def forget(
        document: Annotated[str, Field(min_length=1, description="path, doc_id, URI, root folder or URL")],
        ctx: Context,
        planned: Annotated[Planned, Resolve(plan_forget)],
        consent: Annotated[ElicitationResult[Removal], Resolve(ask_forget)],
        collection: str | None = None,
    ) -> Annotated[CallToolResult, WriteReport]:
        """Remove one document (path, doc_id or URI) or a whole root folder (its absolute path) or
        URL from the index; files on disk are not touched. A document of a kept root comes back on
        the next reindex unless excluded in docshelf.toml. The user may be asked to confirm first."""

        def work() -> dict[str, Any]:
            done = shelf.forget(document, collection, confirm)
            return {
                "action": "forget", "collection": done.collection, "removed": len(done.removed),
                "removed_paths": done.removed, "note": None,
            }  # fmt: skip

        try:
            confirm = guard("forget", planned, consent)
            await anyio.to_thread.run_sync(shelf.wait_for_model)
            payload = await off_loop(shelf, work)
        except DeclinedError as exc:
            return declined("forget", exc)
        except DocshelfError as exc:
            raise ToolError(str(exc)) from exc
        return await finish(ctx, payload)

    @tool(server, "Re-index", REMOVING)
    async def reindex(
        ctx: Context,
        planned: Annotated[Planned, Resolve(plan_reindex)],
        consent: Annotated[ElicitationResult[Removal], Resolve(ask_reindex)],
        collection: str | None = None,
    ) -> Annotated[CallToolResult, WriteReport]:
        """Re-sync every root with the files on disk: new and changed files indexed, vanished ones
        dropped (the user may be asked to confirm that first). Incremental. Reports progress; can be
        cancelled."""

        def job(progress: Progress) -> list[IndexReport]:
            return shelf.reindex(collection, progress, guard("reindex", planned, consent))

        try:
            reports = await _indexing(shelf, ctx, job)
        except DeclinedError as exc:
            return declined("reindex", exc)
        except (DocshelfError, _Cancelled) as exc:
            raise ToolError(str(exc) or "cancelled") from exc
        return await finish(ctx, _report("reindex", reports, budget))
