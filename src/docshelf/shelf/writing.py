"""The write use cases' decisions: which collection a target belongs to, and with which settings."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.config import Settings
from docshelf.errors import AccessError, SourceError
from docshelf.shelf import settings as recorded

if TYPE_CHECKING:
    from docshelf.store.base import Store

__all__ = ["CollectionPlan", "Targets", "plan_collection", "split_targets"]


@dataclass
class Targets:
    """What an `index` call names: folders (new or known roots), files under roots, URLs."""

    folders: list[Path] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)


def split_targets(targets: Sequence[str | Path]) -> Targets:
    """Sort targets into folders, files and URLs; a path that does not exist is an error."""
    from docshelf.shelf.allowed import refuse_system_tree
    from docshelf.sources.remote import is_url

    out = Targets()
    for target in targets:
        text = str(target)
        if isinstance(target, str) and is_url(text):
            out.urls.append(text)
            continue
        path = Path(text).expanduser()
        refuse_system_tree(path.resolve())
        if _readable(path, folder=True):
            out.folders.append(path.resolve())
        elif _readable(path, folder=False):
            out.files.append(path.resolve())
        elif path.exists():
            raise AccessError(f"{path} is not a regular file or folder: only folders and files are indexed")
        else:
            raise SourceError(f"{path} does not exist; pass an existing folder, file or http(s) URL")
    return out


def _readable(path: Path, folder: bool) -> bool:
    """Whether ``path`` is a folder (or a regular file) this user may read; SourceError when it is
    one that cannot be read (an OSError here would be taken for a store problem)."""
    try:
        if not (path.is_dir() if folder else path.is_file()):
            return False
        if folder:
            with os.scandir(path):
                pass
        else:
            with path.open("rb"):
                pass
        return True
    except OSError as exc:
        what = "folder" if folder else "file"
        raise SourceError(
            f"cannot read the {what} {path}: {exc.strerror or exc}; check its permissions (or run docshelf "
            "as a user who may read it)"
        ) from exc


def collection_of(store: Store, path: Path, default: str) -> str:
    """The collection that already has ``path`` under one of its roots, else ``default``."""
    from docshelf.sources.names import is_within

    for name in store.collections():
        if any(is_within(path, Path(r)) for r in store.collection_roots(name)):
            return name
    return default


def folder_collection(store: Store, folder: Path, named_in_config: str | None) -> str:
    """The collection a folder belongs to: the one whose root holds it, else the one its own
    docshelf.toml names, else one named after the folder (never a shared `default`)."""
    name = collection_of(store, folder, "")
    if name:
        return name
    if named_in_config:
        return named_in_config
    slug = re.sub(r"[^\w.-]+", "-", folder.name).strip("-.") or "documents"
    return slug[:64]


def file_collection(store: Store, path: Path, collection: str | None) -> str:
    """The collection whose root holds a file given to `index` (a file is never a root)."""
    from docshelf.sources.names import is_within

    for name in [collection] if collection else store.collections():
        if any(is_within(path, Path(r)) for r in store.collection_roots(name)):
            return name
    raise AccessError(
        f"{path} is not under an indexed folder; docshelf indexes folders: index {path.parent} (all of its "
        "files), or put this file in a folder of its own and index that"
    )


@dataclass
class CollectionPlan:
    """The settings one sync of a collection runs with, and what changed on the way."""

    settings: Settings
    origin: str
    changes: list[str] = field(default_factory=list)
    force: bool = False  # chunk or parse settings changed: every file is parsed again
    notes: list[str] = field(default_factory=list)
    analyze_changed: bool = False


def candidate_settings(
    base: Settings, config_path: Path | None, explicit: bool, roots: Sequence[Path]
) -> tuple[Settings, str]:
    """The settings a new collection would record, and where they come from.

    An explicit ``--config`` wins; then a ``docshelf.toml`` at the top of the first new root;
    then the process's own (its config file, the environment, the defaults).
    """
    if explicit and config_path is not None:
        return base, str(config_path)
    for root in roots:
        found = recorded.config_in(root)
        if found is not None and found != config_path:
            return recorded.settings_from(found), str(found)
    if config_path is not None:
        return base, str(config_path)
    defaults = recorded.shaping(Settings(), recorded.COLLECTION_PARTS + recorded.INDEX_PARTS)
    mine = recorded.shaping(base, recorded.COLLECTION_PARTS + recorded.INDEX_PARTS)
    return base, "defaults" if mine == defaults else "environment"


def plan_collection(
    store: Store, name: str, base: Settings, config_path: Path | None, explicit: bool,
    new_roots: Sequence[Path], reconfigure: bool,
) -> CollectionPlan:  # fmt: skip
    """Record (first index, or an explicit reconfigure) or read back a collection's settings."""
    rec = recorded.read_collection(store, name)
    index_rec = recorded.read_index(store)
    # a collection indexed before settings were recorded: its roots' own docshelf.toml counts too
    roots = list(new_roots) if rec is not None else [*new_roots, *map(Path, store.collection_roots(name))]
    candidate, origin = candidate_settings(base, config_path, explicit, roots)
    plan = CollectionPlan(base, origin)
    if rec is None or reconfigure:
        values = recorded.shaping(candidate, recorded.COLLECTION_PARTS)
        if rec is not None:
            plan.changes = recorded.changes(rec.values, values)
            plan.force = any(not line.startswith("sources.") for line in plan.changes)
        if rec is None or plan.changes:
            rec = recorded.record_collection(store, name, candidate, origin)
        if index_rec is None or reconfigure:
            analyze = recorded.shaping(candidate, recorded.INDEX_PARTS)
            if index_rec is not None and (diff := recorded.changes(index_rec.values, analyze)):
                plan.changes += diff
                plan.analyze_changed = True
            if index_rec is None or plan.analyze_changed:
                index_rec = recorded.record_index(store, candidate, origin)
    else:
        diff = recorded.changes(rec.values, recorded.shaping(candidate, recorded.COLLECTION_PARTS))
        if diff and origin != "defaults":
            shown = "; ".join(diff[:3]) + ("; ..." if len(diff) > 3 else "")
            plan.notes.append(
                f"the settings from {origin} differ from those recorded for collection {name!r} "
                f"({shown}); the recorded ones were used. To change them: "
                f"`docshelf index -c {name} --config FILE`"
            )
    plan.settings = recorded.apply(base, rec, index_rec)
    plan.origin = rec.origin
    return plan
