"""`docshelf index URL`: turn URLs into mirror folders and refresh the mirrors a collection has."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from docshelf.config import Settings
from docshelf.errors import DocshelfError
from docshelf.sources.drive import canonical_drive_url, fetch_drive, is_drive_url
from docshelf.sources.mirror import mirror_root, read_manifest
from docshelf.sources.web import Fetcher, WebResult, crawl
from docshelf.types import SkippedFile

__all__ = ["Gathered", "drop_mirror", "gather", "is_url", "mirror_of"]


def is_url(arg: str) -> bool:
    """True for http(s) URLs (anything else given to `index` is a folder)."""
    return arg.lower().startswith(("http://", "https://"))


@dataclass
class Gathered:
    """The roots to sync and what fetching reported."""

    roots: list[Path] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    fetched: int = 0
    unchanged: int = 0
    empty: list[str] = field(default_factory=list)  # new URLs that gave nothing (why: in skipped)


def mirror_of(settings: Settings, url: str) -> Path:
    """The mirror folder of a URL given to `index` (the same page or Drive item shared with
    other query parameters or a #fragment is one mirror)."""
    data_dir = settings.store.data_dir.expanduser().resolve()
    drive = is_drive_url(url)
    url = url.split("#", 1)[0]
    return mirror_root(data_dir, "drive" if drive else "web", canonical_drive_url(url) if drive else url)


def drop_mirror(settings: Settings, root: str) -> None:
    """Delete a forgotten mirror folder (only ever inside the data dir's sources/)."""
    path = Path(root)
    sources = settings.store.data_dir.expanduser().resolve() / "sources"
    if path.parent == sources and read_manifest(path) is not None:
        shutil.rmtree(path, ignore_errors=True)


def gather(
    settings: Settings, args: Sequence[str], known_roots: Sequence[str] = (), agent: bool = False, *,
    supported: Callable[[str], bool],
) -> Gathered:  # fmt: skip
    """Folders as given; each URL fetched into its mirror; known mirrors re-fetched (conditional).
    For an ``agent`` (MCP ingest) no fetch reaches a local or private address unless
    ``web.agent_private_hosts`` allows it. ``supported`` tells which file names a Drive folder's
    files may have to be downloaded (those a parser reads)."""
    out = Gathered()
    targets: dict[Path, str] = {}
    for arg in args:
        if not is_url(arg):
            out.roots.append(Path(arg))
            continue
        # the same page or Drive item shared with other query parameters is one mirror
        root = mirror_of(settings, arg)
        targets[root] = arg.split("#", 1)[0]
        out.roots.append(root)
    known = {Path(r) for r in known_roots}
    for root in known:
        manifest = read_manifest(root)
        if manifest is not None:
            targets.setdefault(root, manifest.url)
    if not targets:
        return out
    for root, url in targets.items():
        root.mkdir(parents=True, exist_ok=True)
        result: WebResult
        try:
            if is_drive_url(url):
                result = fetch_drive(url, root, settings.web, supported)
            else:
                private_ok = not agent or settings.web.agent_private_hosts
                result = crawl(url, root, settings.web, Fetcher(settings.web, private_ok))
        except DocshelfError as exc:  # gdown missing, not a Drive link: this URL only
            result = WebResult(root, skipped=[SkippedFile(url, str(exc))])
        out.skipped.extend(result.skipped)
        out.fetched += len(result.fetched)
        out.unchanged += len(result.unchanged)
        manifest = read_manifest(root)
        if root not in known and (manifest is None or not manifest.files):
            # a new URL that gave nothing: report it, and do not add an empty root to the collection
            out.roots.remove(root)
            out.empty.append(url)
            shutil.rmtree(root, ignore_errors=True)
    return out
