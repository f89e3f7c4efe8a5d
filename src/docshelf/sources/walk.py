"""Walk corpus roots: globs, .gitignore, hidden/binary/oversized files, symlinks that stay inside."""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pathspec

from docshelf.bomless import bomless_utf
from docshelf.errors import SourceError
from docshelf.sources.names import is_within, on_disk
from docshelf.sources.regular import special_kind
from docshelf.types import SkippedFile, SourceFile

__all__ = [
    "Sniffer", "WalkResult", "is_within", "kept_by", "on_disk", "resolve_root", "walk_paths", "walk_roots",
]  # fmt: skip

_SNIFF_BYTES = 8192
# Python's build leftovers are never documents: passed over like hidden (VCS) folders, not listed
# as skipped ("no parser for .pyc") on every sync
_LEFTOVER_NAMES = frozenset({"__pycache__", "py.typed"})
_LEFTOVER_SUFFIXES = (".pyc", ".pyo")


def _passed_over(name: str) -> bool:
    """Hidden entries and Python's build leftovers: never documents, never listed."""
    return name.startswith(".") or name in _LEFTOVER_NAMES or name.endswith(_LEFTOVER_SUFFIXES)


@dataclass
class WalkResult:
    """Files to index and files left out (with reasons).

    ``unreadable`` names files that exist but could not be read, and folders that could not be
    listed (ending in "/"): what is indexed from them is kept, not taken for deleted."""

    files: list[SourceFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


def kept_by(unreadable: set[str], rel_path: str) -> bool:
    """True if ``rel_path`` is, or lies in, one of the ``unreadable`` names of a walk."""
    if rel_path in unreadable or "" in unreadable:
        return True
    parts = rel_path.split("/")
    return any("/".join(parts[:i]) + "/" in unreadable for i in range(1, len(parts)))


def resolve_root(root: Path) -> Path:
    """Resolve a corpus root or raise a SourceError that says what is wrong."""
    path = root.expanduser()
    if not path.exists():
        raise SourceError(f"corpus root {root} does not exist; check the path and retry")
    if not path.is_dir():
        raise SourceError(f"corpus root {root} is not a folder; give the folder that holds it")
    return path.resolve()


def _spec(patterns: Sequence[str]) -> pathspec.GitIgnoreSpec | None:
    return pathspec.GitIgnoreSpec.from_lines(patterns) if patterns else None


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# relative path -> for a file admitted by its content rather than its name (README, copyright.gz):
# whether its first bytes are those of a text file; None for the others
Sniffer = Callable[[str], Callable[[bytes], bool] | None]


def _head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(_SNIFF_BYTES)


def _no_parser(name: str) -> str:
    suffixes = PurePosixPath(name).suffixes
    # an archive or other format inside .gz is named with it: "no parser for .tar.gz"
    kind = "".join(suffixes[-2:] if [s.lower() for s in suffixes[-1:]] == [".gz"] else suffixes[-1:])
    if not kind:
        return "no parser for files without an extension"
    if kind.lower().endswith(".gz"):  # an archive, or a format inside that no parser takes
        return f"no parser for {kind}"
    # said once per extension by `status --skipped` (the advice after the last "; ")
    return (
        f"no parser for {kind}; if such files are text, map the extension in a docshelf.toml, "
        f'[sources] extensions = {{ "{kind.lower()}" = "text" }}, and index with --config FILE'
    )


def _looks_binary(path: Path) -> bool:
    head = _head(path)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 text has NULs but is text
        return False
    return b"\x00" in head and bomless_utf(head) is None


@dataclass
class _Walker:
    root: Path
    include: pathspec.GitIgnoreSpec | None
    exclude: pathspec.GitIgnoreSpec | None
    respect_gitignore: bool
    max_bytes: int
    binary_ok: frozenset[str]
    result: WalkResult
    parseable: Callable[[str], bool] | None = None
    # (relative path, size, mtime_ns) -> indexed as it is now: its content is not sniffed again
    known: Callable[[str, int, int], bool] | None = None
    sniffer: Sniffer | None = None
    # (device, inode) of each folder walked -> the path it was walked as ("." for the root)
    visited: dict[tuple[int, int], str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # string slicing instead of pathlib per file: a no-op resync of 100k files is mostly this
        self._prefix = os.fspath(self.root).rstrip(os.sep) + os.sep

    def _rel(self, path: Path) -> str:
        return _below(os.fspath(path), self.root, self._prefix)

    def walk(self, folder: Path, ignores: list[tuple[Path, pathspec.GitIgnoreSpec]]) -> None:
        what = "cannot list folder"
        try:
            st = folder.stat()
            if (st.st_dev, st.st_ino) in self.visited:  # a folder seen twice (visit says why)
                return
            self.visited[(st.st_dev, st.st_ino)] = self._rel(folder) if folder != self.root else "."
            if self.respect_gitignore and (folder / ".gitignore").is_file():
                # unreadable rules: skip the folder rather than index what they may exclude
                what = "cannot read its .gitignore"
                lines = (folder / ".gitignore").read_text("utf-8", errors="replace").splitlines()
                ignores = [*ignores, (folder, pathspec.GitIgnoreSpec.from_lines(lines))]
                what = "cannot list folder"
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            reason = f"{what}: {exc.strerror}; folder skipped, its indexed files are kept"
            self.unreadable(folder, reason, True)
            return
        for entry in entries:
            # hidden entries, Python's leftovers and the settings file are never documents
            if _passed_over(entry.name) or (folder == self.root and entry.name == "docshelf.toml"):
                continue
            self.visit(Path(entry.path), entry.is_symlink(), ignores)

    def visit(self, path: Path, is_link: bool, ignores: list[tuple[Path, pathspec.GitIgnoreSpec]]) -> None:
        try:
            real = path.resolve() if is_link else path
            if is_link and not is_within(real, self.root):
                self.skip(path, "symlink points outside the corpus root")
                return
            st = real.stat()
        except RuntimeError:  # Python < 3.13: resolve() raises this for a loop of links
            self.skip(path, "symlink loop: the link leads back to itself")
            return
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self.skip(path, "symlink loop: the link leads back to itself")
            elif exc.errno == errno.ENOENT:  # gone since the listing, or a dangling link
                self.skip(path, f"cannot read: {exc.strerror}")
            else:  # a file or a folder: whatever is indexed under this name is kept
                self.unreadable(path, f"cannot read: {exc.strerror}; anything indexed from it is kept", None)
            return
        is_dir = stat.S_ISDIR(st.st_mode)
        rel = self._rel(path)
        if not _utf8(rel):  # undecodable bytes (surrogate escapes) cannot be stored or cited
            shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            self.result.skipped.append(SkippedFile(shown, "the file name is not valid UTF-8; rename it"))
            return
        if self._ignored(path, rel, is_dir, ignores):
            return
        if is_dir:
            if is_link and self._followed_twice(path, real, (st.st_dev, st.st_ino)):
                return
            self.walk(real, ignores)
            return
        if self.include is not None and not self.include.match_file(rel):
            return
        if not stat.S_ISREG(st.st_mode):  # stat only: opening a FIFO waits for a writer forever
            self.skip(path, f"not a regular file ({special_kind(st.st_mode)}): never read")
            return
        if self.parseable is not None and not self.parseable(rel):
            # decided by name, before the file is opened: a /proc or device file is never read
            self.skip(path, _no_parser(path.name))
            return
        sniff = None if self.sniffer is None else self.sniffer(rel)
        # a file taken for its content is sniffed first: a large extension-less binary stays out
        # silently instead of being reported as too large
        if sniff is None and self._too_large(path, st.st_size):
            return
        nfc = rel if rel.isascii() else unicodedata.normalize("NFC", rel)
        try:
            if self.known is not None and self.known(nfc, st.st_size, st.st_mtime_ns):
                # indexed as it is: no sniff, only whether it can still be read (one syscall)
                if not os.access(real, os.R_OK):
                    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
                binary = False
            elif sniff is not None:
                head = _head(real)
                if not head or not sniff(head):
                    # an extension-less program or image (or an empty file, vim's `4913` probe) is
                    # no document: left out unreported, like a file the include globs leave out
                    # (an indexed version goes too)
                    return
                binary = False
            else:
                binary = os.path.splitext(rel)[1].lower() not in self.binary_ok and _looks_binary(real)
        except OSError as exc:
            self.unreadable(path, f"cannot read: {exc.strerror}; any indexed version is kept", False)
            return
        if binary:  # an indexed text file overwritten with binary bytes keeps its old version
            self.unreadable(path, "binary file; any version indexed before is kept", False)
            return
        if sniff is not None and self._too_large(path, st.st_size):
            return
        self.result.files.append(
            SourceFile(
                root=self.root,
                path=real,
                rel_path=nfc,
                size=st.st_size,
                mtime_ns=st.st_mtime_ns,
            )
        )

    def _followed_twice(self, link: Path, real: Path, key: tuple[int, int]) -> bool:
        """Skip (and say so) a link to a folder that holds it (a loop), or to a folder already
        walked under another path. A watcher's walk of single names knows only the first."""
        if is_within(link.parent.resolve(), real):
            where = "the corpus root" if real == self.root else self._rel(real)
            self.skip(link, f"symlink loop: leads back to {where}, which holds it")
            return True
        seen = self.visited.get(key)
        if seen is not None:
            where = "the corpus root" if seen == "." else seen
            self.skip(link, f"symlink to a folder already indexed as {where}")
            return True
        return False

    def _too_large(self, path: Path, size: int) -> bool:
        if size <= self.max_bytes:
            return False
        mb, cap = size / 1_048_576, self.max_bytes / 1_048_576
        self.skip(path, f"too large ({mb:.1f} MB > {cap:g} MB cap; raise sources.max_file_mb)")
        return True

    def _ignored(
        self, path: Path, rel: str, is_dir: bool, ignores: list[tuple[Path, pathspec.GitIgnoreSpec]]
    ) -> bool:
        suffix = "/" if is_dir else ""
        if self.exclude is not None and self.exclude.match_file(rel + suffix):
            return True
        text = os.fspath(path)
        return any(spec.match_file(_below(text, base) + suffix) for base, spec in ignores)

    def skip(self, path: Path, reason: str) -> str:
        try:
            shown = path.relative_to(self.root).as_posix()
        except ValueError:
            shown = str(path)
        self.result.skipped.append(SkippedFile(shown, reason))
        return shown

    def unreadable(self, path: Path, reason: str, folder: bool | None) -> None:
        """Skip ``path``, which exists but cannot be read or listed now (a ``folder``, a file, or
        None: unknown): what is indexed from it is kept."""
        rel = unicodedata.normalize("NFC", self.skip(path, reason))
        if folder is not False:
            self.result.unreadable.append("" if rel == "." else rel + "/")
        if folder is not True:
            self.result.unreadable.append(rel)


def _below(path: str, base: Path, prefix: str | None = None) -> str:
    """``path`` relative to the folder ``base`` that holds it, as POSIX text (``prefix``: base's
    text with a trailing separator, when the caller keeps it)."""
    prefix = prefix or os.fspath(base).rstrip(os.sep) + os.sep
    return path[len(prefix) :] if path.startswith(prefix) else Path(path).relative_to(base).as_posix()


def walk_roots(
    roots: Sequence[Path],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    respect_gitignore: bool = True,
    max_file_mb: float = 50.0,
    binary_extensions: Sequence[str] = (),
    parseable: Callable[[str], bool] | None = None,
    known: Callable[[str, int, int], bool] | None = None,
    sniffer: Sniffer | None = None,
) -> Iterator[tuple[Path, WalkResult]]:
    """Yield (resolved root, files and skips) for each root, in path order.

    Hidden entries are never entered; a symlink is followed only while its
    target stays inside the root. ``binary_extensions`` are formats whose
    parsers read binary files (PDF, DOCX, ...), so the NUL-byte sniff is off.
    ``parseable`` (a relative path -> has a parser) skips the others unopened; ``known``
    (relative path, size, mtime_ns -> indexed like that) spares unchanged files the sniff;
    ``sniffer`` names the files taken only when their first bytes are text (README, no extension).
    """
    for root in roots:
        resolved = resolve_root(root)
        walker = _walker(resolved, include, exclude, respect_gitignore, max_file_mb, binary_extensions,
                         parseable, known, sniffer)  # fmt: skip
        walker.walk(resolved, [])
        yield resolved, walker.result


def _walker(
    root: Path, include: Sequence[str], exclude: Sequence[str], respect_gitignore: bool, max_file_mb: float,
    binary_extensions: Sequence[str], parseable: Callable[[str], bool] | None,
    known: Callable[[str, int, int], bool] | None = None, sniffer: Sniffer | None = None,
) -> _Walker:  # fmt: skip
    return _Walker(
        root=root, include=_spec(include), exclude=_spec(exclude), respect_gitignore=respect_gitignore,
        max_bytes=int(max_file_mb * 1_048_576), binary_ok=frozenset(e.lower() for e in binary_extensions),
        result=WalkResult(), parseable=parseable, known=known, sniffer=sniffer,
    )  # fmt: skip


def walk_paths(
    root: Path,
    paths: Sequence[Path],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    respect_gitignore: bool = True,
    max_file_mb: float = 50.0,
    binary_extensions: Sequence[str] = (),
    parseable: Callable[[str], bool] | None = None,
    sniffer: Sniffer | None = None,
) -> WalkResult:
    """What ``walk_roots`` would report for just these files under ``root`` (a watcher's changes):
    the same rules, read from the folders on each file's way down only. Missing files are left out."""
    resolved = resolve_root(root)
    walker = _walker(resolved, include, exclude, respect_gitignore, max_file_mb, binary_extensions,
                     parseable, None, sniffer)  # fmt: skip
    specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}
    for path in paths:
        # lexists: a link loop or a dangling link is said, as the full walk says it
        if not is_within(path, resolved) or path == resolved or not os.path.lexists(path):
            continue
        parts = path.relative_to(resolved).parts
        if any(_passed_over(p) for p in parts) or parts == ("docshelf.toml",):
            continue
        ignores: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
        folder, hidden = resolved, False
        for i, part in enumerate(parts):
            if respect_gitignore and folder not in specs:
                gi = folder / ".gitignore"
                lines = gi.read_text("utf-8", errors="replace").splitlines() if gi.is_file() else []
                specs[folder] = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
            if (spec := specs.get(folder)) is not None:
                ignores.append((folder, spec))
            if i == len(parts) - 1:
                break
            folder = folder / part
            if walker._ignored(folder, folder.relative_to(resolved).as_posix(), True, ignores):
                hidden = True
                break
        if not hidden:
            walker.visit(path, path.is_symlink(), ignores)
    return walker.result
