"""Mirror folders: web pages and Drive files fetched under the data dir, indexed like any folder.

A mirror is an ordinary corpus root, so sync, incremental re-indexing and the path guard
work on it unchanged. Its hidden manifest (never walked: hidden files are skipped) maps
each file to the URL it came from, with the validators (ETag, Last-Modified) for re-fetching.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "MANIFEST",
    "Manifest",
    "MirrorFile",
    "mirror_root",
    "read_manifest",
    "safe_name",
    "source_metadata",
    "write_atomic",
    "write_manifest",
]

MANIFEST = ".docshelf-source.json"
_UNSAFE = re.compile(r"[^\w.\-]+")


@dataclass
class MirrorFile:
    """Where one mirrored file came from."""

    url: str
    etag: str | None = None
    last_modified: str | None = None
    fetched_at: float = 0.0


@dataclass
class Manifest:
    """The manifest of one mirror: its kind ("web" or "drive"), start URL and files."""

    kind: str
    url: str
    files: dict[str, MirrorFile] = field(default_factory=dict)  # rel path -> origin

    def as_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=1, sort_keys=True)


def mirror_root(data_dir: Path, kind: str, url: str) -> Path:
    """The mirror folder of a start URL: readable host name plus a hash of the whole URL."""
    host = safe_name(urlsplit(url).hostname or "site", 60)
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:10]
    return data_dir / "sources" / f"{kind}-{host}-{digest}"


def safe_name(name: str, limit: int = 100) -> str:
    """A file-name-safe, non-hidden version of ``name`` (long names keep a hash)."""
    clean = _UNSAFE.sub("_", unicodedata.normalize("NFC", name)).strip("_") or "_"
    clean = "_" + clean[1:] if clean.startswith(".") else clean
    if len(clean) > limit:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        clean = clean[: limit - 9] + "-" + digest
    return clean


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_manifest(root: Path) -> Manifest | None:
    """The manifest of ``root``, or None when it is no (readable) mirror."""
    try:
        raw = json.loads((root / MANIFEST).read_text("utf-8"))
        files = {rel: MirrorFile(**rec) for rel, rec in raw.get("files", {}).items()}
        return Manifest(kind=str(raw["kind"]), url=str(raw["url"]), files=files)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_manifest(root: Path, manifest: Manifest) -> None:
    write_atomic(root / MANIFEST, manifest.as_json().encode("utf-8"))


@functools.lru_cache(maxsize=64)
def _urls(root: str, mtime_ns: int) -> dict[str, tuple[str, str]]:
    manifest = read_manifest(Path(root))
    if manifest is None:
        return {}
    return {rel: (rec.url, manifest.kind) for rel, rec in manifest.files.items()}


def _lookup(root: str, rel: str) -> tuple[str, str] | None:
    try:
        mtime = os.stat(os.path.join(root, MANIFEST)).st_mtime_ns
    except OSError:  # not a mirror: the common case costs one failed stat
        return None
    return _urls(root, mtime).get(rel)


def source_metadata(root: Path | str, rel: str) -> dict[str, Any]:
    """Document metadata for a mirrored file: ``source_url`` and ``source`` (web/drive)."""
    found = _lookup(str(root), rel)
    return {"source_url": found[0], "source": found[1]} if found else {}
