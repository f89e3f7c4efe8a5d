"""Which local paths a write on behalf of an agent may touch, and the collection a new folder joins."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.errors import AccessError

if TYPE_CHECKING:
    from docshelf.store.base import Store

__all__ = ["SYSTEM_TREES", "check_allowed", "refuse_system_tree"]

# kernel and device trees: their "files" block, never end or change under a stat
SYSTEM_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def refuse_system_tree(path: Path) -> None:
    """AccessError for a path in /proc, /sys or /dev: it would be stored as a root that breaks every sync."""
    for tree in SYSTEM_TREES:
        if _within(path, tree):
            raise AccessError(f"refused {path}: {tree} holds kernel and device files, not documents")


def check_allowed(target: Path, allowed: Sequence[Path], store: Store) -> None:
    """Refuse ``target`` unless it lies in an allowed folder (none configured: an indexed root)."""
    path = target.expanduser().resolve()
    refuse_system_tree(path)
    if allowed:
        folders = [Path(a).expanduser().resolve() for a in allowed]
        where = "the folders this server may index (" + ", ".join(map(str, folders)) + ")"
    else:
        folders = [Path(r) for name in store.collections() for r in store.collection_roots(name)]
        where = "every folder indexed so far"
    if any(_within(path, f) for f in folders):
        return
    raise AccessError(
        f"refused to index {path}: it is outside {where}. Ask the user to run `docshelf index {path}`, "
        "or to start the server with `--allow-ingest DIR` (server.allow_ingest)"
    )
