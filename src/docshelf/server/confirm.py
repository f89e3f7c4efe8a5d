"""Confirm before destroying: a write that would remove documents asks the user first, through MCP
elicitation, when the client can be asked (what will be removed, how many); declined, nothing
changes. A client without elicitation is not asked, as before.

The question comes before the tool runs (the 2026 protocol asks it in an input_required round,
the 2025 one mid-call; the SDK's resolvers do both): a dry run of the same write (``confirm``
notes what it would remove and says no, so it stops before any write) tells what to ask, and the
write itself then removes no more than the user agreed to.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel, Field

from docshelf.errors import DeclinedError, DocshelfError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from docshelf.shelf import Confirm, Shelf

__all__ = [
    "FEW", "Planned", "Removal", "ask_forget", "ask_ingest", "ask_reindex", "bind", "can_ask", "dry_run",
    "guard", "plan_forget", "plan_ingest", "plan_reindex", "question",
]  # fmt: skip

log = logging.getLogger("docshelf.server")

FEW = 3  # a forget of more documents than this asks first (a root or a URL always does)
_SHOWN = 10  # paths named in the question


class Removal(BaseModel):
    """What the user answers."""

    remove: bool = Field(description="remove these documents from the index (files on disk stay)")


@dataclass(frozen=True)
class Planned:
    """What a write would remove, per collection: (collection, paths, the root it forgets)."""

    asks: bool  # the client can be asked (else nothing was planned, and nobody is asked)
    removals: list[tuple[str, list[str], str | None]] = field(default_factory=list)

    @property
    def paths(self) -> set[tuple[str, str]]:
        return {(c, p) for c, paths, _ in self.removals for p in paths}


def can_ask(ctx: Context) -> bool:
    caps = ctx.client_capabilities
    return caps is not None and caps.elicitation is not None


def dry_run(ctx: Context, write: Callable[[Confirm], Any]) -> Planned:
    """What ``write(confirm)`` would remove, found by running it with a ``confirm`` that notes the
    removals and declines them (so the write stops before changing anything). A write that fails
    otherwise is left to fail again for real, with its own message."""
    if not can_ask(ctx):
        return Planned(False)
    noted: list[tuple[str, list[str], str | None]] = []

    def note(collection: str, paths: list[str], root: str | None) -> bool:
        noted.append((collection, list(paths), root))
        return False

    try:
        write(note)
    except DeclinedError:
        pass
    except DocshelfError as exc:
        log.debug("dry run failed: %s", exc)
    return Planned(True, [r for r in noted if r[1] or r[2]])


def question(action: str, planned: Planned, always: bool) -> Elicit[Removal] | None:
    """The question for the user, or None when there is nothing to ask: no removal, a client that
    cannot be asked, or (not ``always``) a forget of a few documents and no root."""
    if not planned.asks or not planned.removals:
        return None
    count = sum(len(p) for _, p, _ in planned.removals)
    roots = [r for _, _, r in planned.removals if r]
    if not always and not roots and count <= FEW:
        return None
    names = [p for _, paths, _ in planned.removals for p in paths]
    shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
    where = ", ".join(dict.fromkeys(repr(c) for c, _, _ in planned.removals))
    what = f"the root {', '.join(roots)} with {count} documents" if roots else f"{count} documents"
    why = "" if action == "forget" else " (their files are gone from disk)"
    message = (
        f"docshelf {action} would remove {what} from collection {where}{why}: {shown or 'none indexed'}. "
        "Remove them from the index? Files on disk are not touched."
    )
    return Elicit(message, Removal)


def guard(action: str, planned: Planned, consent: ElicitationResult[Removal]) -> Confirm | None:
    """The ``confirm`` the write runs with: None for a client that cannot be asked (as before);
    else removals only of what was planned (and agreed to, if asked). DeclinedError when the user
    said no."""
    if not planned.asks:
        return None
    agreed = isinstance(consent, AcceptedElicitation) and (
        not isinstance(consent.data, Removal) or consent.data.remove
    )
    if not agreed:
        raise DeclinedError(f"the user declined: {action} removed nothing and changed nothing")
    allowed = planned.paths

    def confirm(collection: str, paths: list[str], root: str | None) -> bool:
        extra = [p for p in paths if (collection, p) not in allowed]
        if extra:
            raise DeclinedError(
                f"{action} would now remove {len(extra)} more documents than when it was planned "
                f"({', '.join(extra[:3])}); nothing changed: call {action} again"
            )
        return True

    return confirm


# The resolvers, run by the SDK before a write tool (their parameters filled by name from the
# tool's arguments): what the write would remove, from a dry run, and the question about it. They
# live here, not in the registering function, because the SDK reads the tools' annotations (which
# name them) in this package's module globals.
_SHELVES: weakref.WeakKeyDictionary[Any, Shelf] = weakref.WeakKeyDictionary()


def bind(server: MCPServer, shelf: Shelf) -> None:
    """The shelf the resolvers of ``server``'s tools plan on."""
    _SHELVES[server] = shelf


def _shelf(ctx: Context) -> Shelf | None:
    shelf = _SHELVES.get(ctx.mcp_server)
    return shelf if shelf is not None and shelf.exists() else None  # no index yet: nothing to remove


def plan_ingest(path: str, collection: str | None, ctx: Context) -> Planned:
    shelf = _shelf(ctx)
    if shelf is None:
        return Planned(False)
    allowed = shelf.settings.server.allow_ingest
    return dry_run(ctx, lambda c: shelf.ingest(path, collection, allowed=allowed, confirm=c))


def ask_ingest(planned: Annotated[Planned, Resolve(plan_ingest)]) -> Elicit[Removal] | None:
    return question("ingest", planned, always=True)


def plan_forget(document: str, collection: str | None, ctx: Context) -> Planned:
    shelf = _shelf(ctx)
    if shelf is None:
        return Planned(False)
    return dry_run(ctx, lambda c: shelf.forget(document, collection, c))


def ask_forget(document: str, planned: Annotated[Planned, Resolve(plan_forget)]) -> Elicit[Removal] | None:
    from docshelf.shelf import is_url

    return question("forget", planned, always=is_url(document))


def plan_reindex(collection: str | None, ctx: Context) -> Planned:
    shelf = _shelf(ctx)
    if shelf is None:
        return Planned(False)
    names = shelf.collections()
    # the collections a reindex syncs (those with roots); a bad name is the reindex's to report
    wanted = (
        ([collection] if collection in names else []) if collection else [n for n in names if shelf.roots(n)]
    )

    def one(name: str) -> Planned:
        return dry_run(ctx, lambda c: shelf.reindex(name, confirm=c))

    found = [one(name) for name in wanted]
    return Planned(can_ask(ctx), [r for p in found for r in p.removals])


def ask_reindex(planned: Annotated[Planned, Resolve(plan_reindex)]) -> Elicit[Removal] | None:
    return question("reindex", planned, always=True)
