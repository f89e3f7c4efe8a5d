"""Settings that shape an index live with it, so every writer (any directory, any door) agrees.

A collection records its ``sources``, ``chunk`` and ``parse`` settings when it is first indexed;
the index records its ``analyze`` settings (one analyzer serves every collection, as one embedding
model does). Later writers use the recorded values whatever ``docshelf.toml`` their working
directory holds; only an explicit reconfigure replaces them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.config import CONFIG_FILENAME, Settings, load_settings

if TYPE_CHECKING:
    from docshelf.store.base import Store

__all__ = [
    "COLLECTION_PARTS",
    "INDEX_PARTS",
    "Recorded",
    "apply",
    "changes",
    "config_in",
    "read_collection",
    "read_index",
    "record_collection",
    "record_index",
    "shaping",
]

COLLECTION_PARTS = ("sources", "chunk", "parse")
INDEX_PARTS = ("analyze",)
_COLLECTION_KEY = "collection_settings/"
_INDEX_KEY = "index_settings"


@dataclass(frozen=True)
class Recorded:
    """Settings recorded with a collection (or the index) and where they came from."""

    values: dict[str, Any]  # part -> settings as JSON
    origin: str
    recorded_at: float


def shaping(settings: Settings, parts: tuple[str, ...]) -> dict[str, Any]:
    """The named parts of ``settings`` as plain JSON values (paths as strings)."""
    return {part: getattr(settings, part).model_dump(mode="json") for part in parts}


def apply(settings: Settings, *recorded: Recorded | None) -> Settings:
    """``settings`` with the recorded parts put in their place."""
    update: dict[str, Any] = {}
    for rec in recorded:
        if rec is None:
            continue
        for part, values in rec.values.items():
            model = type(getattr(settings, part))
            # a setting a later version dropped must not make the collection unreadable
            known = {k: v for k, v in values.items() if k in model.model_fields}
            update[part] = model.model_validate(known)
    return settings.model_copy(update=update) if update else settings


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """``part.key: old -> new`` for every value that differs (keys of either side). A key the old
    record lacks (a setting added since) counts as its default, as ``apply`` reads it."""
    out: list[str] = []
    for part in sorted(set(old) | set(new)):
        a, b = old.get(part, {}), new.get(part, {})
        field = Settings.model_fields.get(part)
        factory = field.default_factory if field is not None else None
        defaults = factory().model_dump(mode="json") if callable(factory) else {}
        a = {**{k: v for k, v in defaults.items() if k in b}, **a}
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                out.append(f"{part}.{key}: {json.dumps(a.get(key))} -> {json.dumps(b.get(key))}")
    return out


def config_in(folder: Path) -> Path | None:
    """The ``docshelf.toml`` at the top of a corpus folder, if it has one."""
    candidate = folder / CONFIG_FILENAME
    return candidate if candidate.is_file() else None


def settings_from(config: Path) -> Settings:
    return load_settings(config)


def _read(store: Store, key: str) -> Recorded | None:
    raw = store.get_meta(key)
    if not raw:
        return None
    try:
        data = json.loads(raw)
        return Recorded(dict(data["values"]), str(data["origin"]), float(data["recorded_at"]))
    except (ValueError, KeyError, TypeError):
        return None  # an unreadable record is as good as none: the next write records afresh


def _write(store: Store, key: str, values: dict[str, Any], origin: str) -> Recorded:
    rec = Recorded(values, origin, time.time())
    payload = {"values": values, "origin": origin, "recorded_at": rec.recorded_at}
    store.set_meta(key, json.dumps(payload, ensure_ascii=False, sort_keys=True))
    return rec


def read_collection(store: Store, name: str) -> Recorded | None:
    return _read(store, _COLLECTION_KEY + name)


def record_collection(store: Store, name: str, settings: Settings, origin: str) -> Recorded:
    return _write(store, _COLLECTION_KEY + name, shaping(settings, COLLECTION_PARTS), origin)


def read_index(store: Store) -> Recorded | None:
    return _read(store, _INDEX_KEY)


def record_index(store: Store, settings: Settings, origin: str) -> Recorded:
    return _write(store, _INDEX_KEY, shaping(settings, INDEX_PARTS), origin)
