"""Paths of stored files on disk: cheap to import (no pathspec), as a search's freshness check
looks up every file it reports without walking anything."""

from __future__ import annotations

import os
import threading
import unicodedata
from pathlib import Path, PurePosixPath

__all__ = ["is_within", "on_disk"]


def on_disk(root: Path, rel_path: str) -> Path:
    """The file a stored (NFC) ``rel_path`` names under ``root``, whatever normalisation its name
    has on disk: a folder is listed only for a part not found as given (macOS writes NFD)."""
    path = root / rel_path
    if os.path.lexists(path):
        return path
    current = root
    for part in PurePosixPath(rel_path).parts:
        candidate = current / part
        if not os.path.lexists(candidate):
            names = _nfc_names(current)
            match = None if names is None else names.get(unicodedata.normalize("NFC", part))
            if match is None:
                return path
            candidate = current / match
        current = candidate
    return current


_LISTINGS: dict[str, tuple[int, dict[str, str]]] = {}
_LISTINGS_LOCK = threading.Lock()
_LISTINGS_KEPT = 8


def _nfc_names(folder: Path) -> dict[str, str] | None:
    """NFC name -> name on disk for ``folder``, kept while its mtime stays the same: a freshness
    pass over many missing files of one large folder listed and normalised it once per file
    (420k gone files of a 5,000-file folder: one pass took longer than 5 minutes)."""
    key = str(folder)
    try:
        mtime = os.stat(folder).st_mtime_ns
        with _LISTINGS_LOCK:
            kept = _LISTINGS.get(key)
        if kept is not None and kept[0] == mtime:
            return kept[1]
        names: dict[str, str] = {}
        for name in os.listdir(folder):
            names.setdefault(unicodedata.normalize("NFC", name), name)
    except OSError:
        return None
    with _LISTINGS_LOCK:
        _LISTINGS.pop(key, None)
        while len(_LISTINGS) >= _LISTINGS_KEPT:
            _LISTINGS.pop(next(iter(_LISTINGS)))
        _LISTINGS[key] = (mtime, names)
    return names


def is_within(path: Path, root: Path) -> bool:
    """True if resolved ``path`` is ``root`` or below it."""
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True
