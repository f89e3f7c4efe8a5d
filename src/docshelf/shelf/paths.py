"""The one gate every file read passes: a relative path must stay inside a known corpus root."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import unquote

from docshelf.errors import AccessError

if TYPE_CHECKING:
    from docshelf.store.base import DocState

__all__ = ["PathGuard", "check_link", "check_relative", "guarded_path"]

# Paths are never percent-decoded after this check, so a literal "%20" is just part of a file
# name ("100%25.md" exists). Escapes are refused only where their decoded form would be a
# traversal, an absolute or Windows path, or a NUL: whoever decodes later must not be fooled.
_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")
_DRIVE = re.compile(r"^[A-Za-z]:")


def _unsafe_decoded(path: str) -> bool:
    """True if decoding ``path`` once or repeatedly (double encoding) yields something unsafe."""
    decoded = path
    for _ in range(4):
        decoded, raw = unquote(decoded), decoded
        if decoded == raw:
            return False
        if (
            any(c in decoded for c in "\x00\\")
            or re.search(r"%2f", raw, re.IGNORECASE) is not None  # an encoded "/" changes the parts
            or decoded.startswith(("/", "~"))
            or _DRIVE.match(decoded) is not None
            or ".." in PurePosixPath(decoded).parts
        ):
            return True
    return True  # still changing after four rounds: nobody names a file like that


def check_relative(path: str) -> str:
    """Return ``path`` as a clean POSIX relative path (NFC) or raise AccessError saying why."""
    why = None
    if not path or not path.strip():
        why = "the path is empty"
    elif "\x00" in path:
        why = "the path holds a NUL byte"
    elif _ENCODED.search(path) and _unsafe_decoded(path):
        why = "URL-encoded '..', '/', '\\' or NUL are not accepted; pass the plain path"
    elif "\\" in path or _DRIVE.match(path):
        why = "Windows-style paths are not accepted; use forward slashes relative to the collection root"
    elif path.startswith(("/", "~")):
        why = "absolute paths are not accepted; pass the path relative to the collection root"
    elif ".." in PurePosixPath(path).parts:
        why = "'..' is not allowed in a document path"
    if why:
        raise AccessError(f"refused path {path!r}: {why}. Use list_documents to see valid paths.")
    return unicodedata.normalize("NFC", str(PurePosixPath(path)))


def guarded_path(
    roots: list[str], root: str, rel_path: str, realpath: Callable[[str], str] = os.path.realpath
) -> Path:
    """The real file for ``rel_path`` under ``root``, refused unless it resolves inside ``root``.

    Symlinks are resolved now, at read time: a link that was harmless at indexing may have
    been re-pointed since. ``realpath`` resolves them (PathGuard's remembers folders).
    """
    from docshelf.index.mounts import owner
    from docshelf.sources.names import is_within, on_disk

    folder = owner(roots, root, rel_path)
    if folder is None:
        raise AccessError(f"{root} is no longer a root of this collection; re-index it")
    clean = check_relative(rel_path)
    if folder != root:  # a folder keyed under its name: the document is stored with its parent
        root, clean = folder, check_relative(clean.partition("/")[2])
    base = Path(realpath(root))
    if base != Path(root):  # roots are stored resolved: this one was swapped for a link since
        raise AccessError(
            f"refused {rel_path!r}: the folder {root} now points to {base}, not to the folder that was "
            f"indexed; to index what is there now, run `docshelf forget {root}` and `docshelf index {base}`"
        )
    real = Path(realpath(str(on_disk(base, clean))))  # stored names are NFC; on disk they may be NFD
    if not is_within(real, base):
        raise AccessError(f"refused {rel_path!r}: it resolves outside the corpus root (symlink escape?)")
    return real


class PathGuard:
    """``guarded_path`` for many documents in a row (a freshness pass), each folder on the way
    resolved once: two stats a file instead of one per part of its path.

    Its answers are ``guarded_path``'s for the folders as they were when first met; a folder
    re-pointed later is seen by the next guard (every pass makes its own).
    """

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def __call__(self, roots: list[str], state: DocState) -> Path:
        return guarded_path(roots, state.root, state.path, self._realpath)

    def _realpath(self, path: str) -> str:
        parent, name = os.path.split(path)
        if not name or name in (".", "..") or not parent:
            return os.path.realpath(path)
        real = self._folders.get(parent)
        if real is None:
            real = self._folders[parent] = self._realpath(parent)
        joined = os.path.join(real, name)
        return os.path.realpath(joined) if os.path.islink(joined) else joined


def check_link(root: str, rel_path: str, data: bytes, indexed_hash: str) -> None:
    """AccessError when ``rel_path`` is reached through a link and its bytes are not the ones
    indexed: the link was re-pointed (or its target edited) since, and serving the new target's
    text under the indexed name would be serving another file."""
    import hashlib

    from docshelf.sources.names import on_disk

    path = on_disk(Path(root), check_relative(rel_path))
    if path.resolve() == path or hashlib.sha256(data).hexdigest() == indexed_hash:
        return
    raise AccessError(
        f"refused {rel_path!r}: it is a link whose target changed since it was indexed (it now leads "
        f"to {path.resolve()}); run `docshelf index` to index what it points to now"
    )
