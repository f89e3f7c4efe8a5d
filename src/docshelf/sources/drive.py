"""Google Drive public links (no OAuth) through gdown: a file, or every file of a folder.

Each Drive file becomes one file of the mirror (and so one document) whose source is its
own Drive URL. Files no parser handles are listed as skipped and never downloaded.
gdown >= 6.3 is required: ``timeout`` (download and download_folder) arrived there; the
calls use keywords only, and ``fuzzy=`` (removed in gdown 6) is not used.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from docshelf.config import WebSettings
from docshelf.errors import SourceError
from docshelf.sources.mirror import Manifest, MirrorFile, read_manifest, safe_name, write_manifest
from docshelf.sources.web import WebResult
from docshelf.types import SkippedFile

__all__ = ["DRIVE_HOSTS", "canonical_drive_url", "fetch_drive", "file_url", "is_drive_url"]

DRIVE_HOSTS = frozenset({"drive.google.com", "docs.google.com"})
_FOLDER = re.compile(r"^/drive/(?:u/\d+/)?folders/([-\w]+)")
_FILE = re.compile(r"^/(?:file|document|spreadsheets|presentation)/(?:u/\d+/)?d/([-\w]+)")
_STAGING = ".partial"  # hidden: the walker never indexes half-downloaded files


class _TooBig(Exception):
    pass


def is_drive_url(url: str) -> bool:
    """True for drive.google.com and docs.google.com links."""
    return (urlsplit(url).hostname or "") in DRIVE_HOSTS


def file_url(file_id: str) -> str:
    """The shareable Drive URL of a file: what its hits cite."""
    return f"https://drive.google.com/file/d/{file_id}/view"


def canonical_drive_url(url: str) -> str:
    """One URL per Drive file or folder (sharing links differ in ?usp=..., /edit, /view)."""
    parts = urlsplit(url)
    folder = _FOLDER.match(parts.path)
    if folder:
        return f"https://drive.google.com/drive/folders/{folder.group(1)}"
    found = _FILE.match(parts.path) or re.search(r"(?:^|&)id=([-\w]+)", parts.query)
    return file_url(found.group(1)) if found else url


def _gdown() -> Any:
    try:
        import gdown
    except ImportError:
        raise SourceError(
            "Google Drive links need the gdown package; `pip install 'docshelf[drive]'`"
        ) from None
    return gdown


def _one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = f"{type(exc).__name__}: {lines[0] if lines else 'no details'}"
    return text if len(text) <= 200 else text[:199] + "…"


def fetch_drive(url: str, root: Path, settings: WebSettings, supported: Callable[[str], bool]) -> WebResult:
    """Download the Drive file or folder at ``url`` into the mirror ``root``."""
    gdown = _gdown()
    old = read_manifest(root) or Manifest("drive", url)
    manifest = Manifest("drive", url)
    result = WebResult(root)
    folder = _FOLDER.match(urlsplit(url).path)
    staging = root / _STAGING
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    common = {"quiet": True, "use_cookies": False, "timeout": settings.timeout_s}
    try:
        if folder is None:
            file_id, _ = gdown.parse_url.parse_url(url)
            if not file_id:
                raise SourceError(f"{url} is not a Google Drive file or folder link")
            entries = [(file_id, None, url)]
        else:
            listed = gdown.download_folder(
                url=url, output=str(staging) + os.sep, skip_download=True, **common
            )
            entries = [(e.id, e.path, file_url(e.id)) for e in listed]
    except SourceError:
        raise
    except Exception as exc:  # gdown and requests raise many types; the old copies stay
        kept = "; the files fetched before stay indexed" if old.files else ""
        reason = f"cannot list the Drive link ({_one_line(exc)}){kept}"
        result.skipped.append(SkippedFile(url, reason))
        shutil.rmtree(staging, ignore_errors=True)
        return result
    try:
        for file_id, path, source in entries:
            rel = "/".join(safe_name(p) for p in re.split(r"[\\/]", path)) if path else None
            if rel is not None and not supported(rel):
                ext = os.path.splitext(rel)[1] or "without an extension"
                result.skipped.append(
                    SkippedFile(rel, f"unsupported file type {ext}; not downloaded ({source})")
                )
                continue
            _download(gdown, file_id, rel, source, staging, settings, supported, common, manifest, result)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for rel in old.files.keys() - manifest.files.keys():
        if not any(s.path in (rel, old.files[rel].url) for s in result.skipped):
            (root / rel).unlink(missing_ok=True)
            result.removed.append(rel)
        else:
            manifest.files[rel] = old.files[rel]  # failed this time: keep the old copy
    write_manifest(root, manifest)
    return result


def _download(
    gdown: Any, file_id: str, rel: str | None, source: str, staging: Path, settings: WebSettings,
    supported: Callable[[str], bool], common: dict[str, Any], manifest: Manifest,
    result: WebResult,
) -> None:  # fmt: skip
    """Fetch one Drive file into the staging folder, then move it into the mirror."""
    limit = int(settings.max_mb * 1_048_576)
    started = time.monotonic()

    def progress(done: int, total: int | None) -> None:  # gdown aborts when this raises
        if done > limit or (total or 0) > limit:
            raise _TooBig(f"larger than {settings.max_mb:g} MB (web.max_mb)")
        if time.monotonic() - started > settings.timeout_s * 10:
            raise _TooBig(f"took over {settings.timeout_s * 10:g} s (10 x web.timeout_s)")

    shown = rel or source
    try:
        # a folder (trailing separator) for a single-file link: gdown names the file
        out = str(staging / file_id) + ("" if rel else os.sep)
        saved = Path(gdown.download(id=file_id, output=out, progress=progress, **common))
    except Exception as exc:
        why = str(exc) if isinstance(exc, _TooBig) else _one_line(exc)
        result.skipped.append(SkippedFile(shown, f"download failed: {why} ({source})"))
        return
    if rel is None:  # a single-file link: the name comes with the download
        rel = safe_name(saved.name)
        if not supported(rel):
            ext = os.path.splitext(rel)[1] or "without an extension"
            result.skipped.append(SkippedFile(rel, f"unsupported file type {ext} ({source})"))
            return
    target = staging.parent / rel
    if target.is_file() and target.read_bytes() == saved.read_bytes():
        result.unchanged.append(source)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(saved, target)  # keeps the mtime gdown set from Last-Modified
        result.fetched.append(source)
    manifest.files[rel] = MirrorFile(source, fetched_at=time.time())
