"""Files known by name or content rather than extension: README, LICENSE, Makefile, no extension at
all, a package's METADATA, and gzipped text (``notes.md.gz``, ``copyright.gz``) read through."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import pytest

from docshelf.config import Settings, load_settings
from docshelf.embed import HashEmbedder
from docshelf.errors import ParseError
from docshelf.parse import default_registry
from docshelf.parse.decode import looks_like_text
from docshelf.parse.gunzip import gunzip
from docshelf.shelf import Shelf
from docshelf.testing import Stages

# An executable's first bytes as Linux writes them (ELF header), then code-like noise.
ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(8) + b"\x02\x00\x3e\x00\x01\x00\x00\x00" + bytes(range(256)) * 8
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00" + bytes(range(256)) * 4


def _gz(text: str) -> bytes:
    return gzip.compress(text.encode("utf-8"), mtime=0)


def _bomb(mb: int) -> bytes:
    """A gzip file that unpacks to ``mb`` MB of zeros (about a thousandth of that on disk)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"0" * (1 << 20)
    return b"".join([*(deflate.compress(block) for _ in range(mb)), deflate.flush()])


def _corpus(root: Path) -> Path:
    docs = root / "docs"
    (docs / "pkg-1.0.dist-info").mkdir(parents=True)
    (docs / "bin").mkdir()
    (docs / "notes").write_text("Plain notes about the quokkaharbor ferry.\n\nSecond paragraph.\n")
    (docs / "Makefile").write_text("all: build\n\nbuild:\n\tcc -o wombatbuild main.c\n")
    (docs / "LICENSE").write_text("Permission is granted to the numbatlicence holder.\n")
    (docs / "README.Debian").write_text("Debian notes on the bilbypackaging.\n")
    (docs / "INSTALL.README").write_text("Install notes for the kowaristall.\n")  # the name as suffix
    (docs / "pkg-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\nThe pkg package reads potoroometadata.\n"
    )
    (docs / "x.md.gz").write_bytes(_gz("# Gzipped guide\n\nThe dunnartgzip line.\nThird line.\n"))
    (docs / "copyright.gz").write_bytes(_gz("Copyright 2024 the quollcopyright authors.\n"))
    (docs / "changelog.Debian.gz").write_bytes(_gz("pkg (1.0) unstable; urgency=low\n\n  * antechinus fix\n"))
    (docs / "bomb.txt.gz").write_bytes(_bomb(8))
    (docs / "bin" / "tool").write_bytes(ELF)  # an extension-less program: left out, not reported
    (docs / "logo").write_bytes(PNG)
    (docs / "tool.gz").write_bytes(gzip.compress(ELF, mtime=0))
    (docs / "backup.tar.gz").write_bytes(gzip.compress(b"x" * 600, mtime=0))
    (docs / ".hidden").write_text("never the sugargliderhidden\n")
    (docs / ".git").mkdir()
    (docs / ".git" / "HEAD").write_text("ref: refs/heads/bandicootvcs\n")
    (docs / ".gitignore").write_text("ignored\n")
    (docs / "ignored").write_text("the pademelonignored text\n")
    return docs


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return _corpus(tmp_path)


@pytest.fixture
def shelf(settings: Settings) -> Shelf:
    settings.sources.max_file_mb = 1  # the bomb unpacks to 8
    return Shelf(settings, embedder=HashEmbedder())


def test_named_and_gzipped_files_are_indexed_binaries_left_out_silently(shelf: Shelf, docs: Path) -> None:
    with shelf:
        sync = shelf.index([docs], "test").sync
        skipped = {s.path: s.reason for s in sync.skipped}
        assert sorted(sync.added) == [
            "INSTALL.README", "LICENSE", "Makefile", "README.Debian", "changelog.Debian.gz", "copyright.gz",
            "notes", "pkg-1.0.dist-info/METADATA", "x.md.gz",
        ]  # fmt: skip
        # binaries found by content stay out unreported; a bomb and an archive say why
        assert set(skipped) == {"bomb.txt.gz", "backup.tar.gz"}
        assert "unpacks to over 1 MB (sources.max_file_mb)" in skipped["bomb.txt.gz"]
        assert skipped["backup.tar.gz"] == "no parser for .tar.gz"
        types = {d.path: d.file_type for d in shelf.list_documents("test")}
        assert types["Makefile"] == "make" and types["x.md.gz"] == "markdown" and types["notes"] == "text"
        for word, path in [
            ("quokkaharbor", "notes"), ("wombatbuild", "Makefile"), ("numbatlicence", "LICENSE"),
            ("bilbypackaging", "README.Debian"), ("potoroometadata", "pkg-1.0.dist-info/METADATA"),
            ("dunnartgzip", "x.md.gz"), ("quollcopyright", "copyright.gz"),
            ("antechinus", "changelog.Debian.gz"), ("kowaristall", "INSTALL.README"),
        ]:  # fmt: skip
            hits = shelf.search(word, k=3, mode="keyword").hits
            assert hits and hits[0].path == path, word
        for word in ("sugargliderhidden", "bandicootvcs", "pademelonignored"):
            assert shelf.search(word, k=3, mode="keyword").hits == [], word

        hit = shelf.search("dunnartgzip", k=1, mode="keyword").hits[0]
        assert hit.citation == "x.md.gz:1-4"  # lines of the unpacked text (the compressed has 1)
        lines = shelf.read_range("x.md.gz", lines=(1, 3))
        assert lines.source == "file" and lines.text == "# Gzipped guide\n\nThe dunnartgzip line.\n"
        doc = shelf.find_document("x.md.gz")
        assert doc.title == "Gzipped guide" and doc.metadata["compression"] == "gzip"


def test_a_file_that_turns_binary_leaves_the_index_quietly(shelf: Shelf, docs: Path) -> None:
    """Taken for its content, an extension-less file that is a program now is no document: it goes,
    where a ``.txt`` overwritten with binary bytes keeps its indexed version."""
    with shelf:
        shelf.index([docs], "test")
        (docs / "notes").write_bytes(ELF)
        sync = shelf.index([], "test").sync
        assert sync.removed == ["notes"] and "notes" not in {s.path for s in sync.skipped}


def test_sources_extensions_map_names_and_files_without_extension(settings: Settings, tmp_path: Path) -> None:
    docs = tmp_path / "d"
    docs.mkdir()
    (docs / "Jenkinsfile").write_text("pipeline { stage('kowari') }\n")
    (docs / "Jenkinsfile.prod").write_text("pipeline { stage('prodkowari') }\n")
    (docs / "notes").write_text("plain woylie notes\n")
    (docs / "README").write_text("the readme still counts\n")
    (docs / "app.log").write_text("a log line\n")
    (docs / "x.md.gz").write_bytes(_gz("# X\n"))
    settings.sources.extensions = {"": "", "Jenkinsfile": "shell", "log": "text", ".gz": ""}
    with Shelf(settings, embedder=HashEmbedder()) as opened:
        sync = opened.index([docs], "test").sync
        assert sorted(sync.added) == ["Jenkinsfile", "Jenkinsfile.prod", "README", "app.log"]
        skipped = {s.path: s.reason for s in sync.skipped}
        assert skipped["notes"] == "no parser for files without an extension"
        assert skipped["x.md.gz"] == "no parser for .md.gz" and len(skipped) == 2
        assert opened.find_document("Jenkinsfile.prod", "test").file_type == "shell"
    for key in ("(none)", ""):  # either key; a name mapped away leaves its files out
        reg = default_registry(load_settings(sources={"extensions": {key: "markdown", "readme": ""}}))
        assert getattr(reg.for_path("notes"), "name", None) == "markdown"
        assert reg.for_path("README") is None and reg.for_path("README.md") is not None
    with pytest.raises(ValueError, match="no parser name"):
        default_registry(load_settings(sources={"extensions": {"Makefile": "nonsense"}}))


def test_a_watched_change_to_an_extensionless_file_is_sniffed_too(settings: Settings, docs: Path) -> None:
    """The watcher's targeted sync walks just the changed files, with the same content check."""
    settings.sources.max_file_mb = 1  # the bomb unpacks to 8: skipped, not chunked and embedded
    with Stages(settings, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [docs])
        (docs / "TODO").write_text("walk the tammar\n")
        (docs / "core").write_bytes(ELF)
        (docs / "4913").write_bytes(b"")  # vim's probe, still there when the sync looks
        sync = rt.indexer().sync("test", changed=[docs / "TODO", docs / "core", docs / "4913"])
        assert sync.added == ["TODO"] and sync.skipped == []


def test_gunzip_stops_a_bomb_at_the_limit_without_unpacking_it() -> None:
    bomb = _bomb(256)
    tracemalloc.start()
    try:
        with pytest.raises(ParseError, match=r"bomb.gz: unpacks to over 4 MB \(parse.max_unzipped_mb\)"):
            gunzip(bomb, "bomb.gz", 4 * 1_048_576, "parse.max_unzipped_mb")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 1_048_576  # the limit and one step, not 256 MB
    # every member is read (as gunzip does); a cut-short or foreign file says so
    assert gunzip(_gz("one ") + _gz("two"), "x.gz", 100, "s") == b"one two"
    with pytest.raises(ParseError, match="cut short"):
        gunzip(_gz("a longer text " * 50)[:-20], "x.gz", 10_000, "s")
    with pytest.raises(ParseError, match="not a readable gzip"):
        gunzip(b"plain text, not gzip", "x.gz", 10_000, "s")


def test_the_content_sniff_tells_text_from_binaries() -> None:
    assert looks_like_text(b"README\n\nSome text.\n")
    assert looks_like_text("Crème brûlée, déjà vu.\n".encode("cp1252"))  # not UTF-8: still text
    assert looks_like_text("é".encode() * 4095 + "é".encode()[:1])  # a character cut at the end
    assert looks_like_text(b"\x1b[1mbold\x1b[0m log\n")
    assert not looks_like_text(ELF) and not looks_like_text(PNG)
    assert not looks_like_text(bytes(range(1, 32)) * 100)  # no NUL, all control bytes


def test_the_cli_indexes_and_reads_a_gzipped_file(tmp_path: Path) -> None:
    docs = _corpus(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env |= {"DOCSHELF_EMBED__MODEL": "hash", "DOCSHELF_STORE__DATA_DIR": str(tmp_path / "data"),
            "DOCSHELF_SOURCES__MAX_FILE_MB": "1"}  # fmt: skip
    cmd = [sys.executable, "-m", "docshelf"]
    index = subprocess.run([*cmd, "index", str(docs)], env=env, capture_output=True, text=True)
    assert index.returncode == 0, index.stderr
    assert "9 added" in index.stderr and "Traceback" not in index.stderr
    assert "bomb.txt.gz" in index.stderr and "tool" not in index.stderr and "logo" not in index.stderr
    read = subprocess.run([*cmd, "read", "x.md.gz:1-3", "--json"], env=env, capture_output=True, text=True)
    assert read.returncode == 0, read.stderr
    got = json.loads(read.stdout)
    assert got["text"] == "# Gzipped guide\n\nThe dunnartgzip line.\n" and got["source"] == "file"
    search = [*cmd, "search", "quollcopyright", "--mode", "keyword", "--json"]
    found = subprocess.run(search, env=env, capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"][0]["path"] == "copyright.gz"


def test_a_suffix_that_names_no_format_is_read_for_its_content(shelf: Shelf, tmp_path: Path) -> None:
    """/usr/share/doc skipped util-linux's releases/v2.30-ReleaseNotes.gz as "no parser for
    .30-ReleaseNotes.gz", unzip's History.600.gz and node.1.gz likewise: a number or a name with
    "-" after the last dot is part of the name, not a format, so the content decides, as for a file
    without an extension. Common text formats are read by extension: .texi, .pod, awk, sed; logs
    only when mapped (a test suite's log outranked the documents on common words)."""
    docs = tmp_path / "docs"
    (docs / "releases").mkdir(parents=True)
    (docs / "releases" / "v2.30-ReleaseNotes.gz").write_bytes(_gz("util-linux 2.30: the kookaburrafix.\n"))
    (docs / "History.600").write_text("Version 6.00: the galahrelease.\n")
    (docs / "node.1.gz").write_bytes(_gz(".TH NODE 1\n.SH NAME\nnode \\- the currawongruntime\n"))
    (docs / "app.log").write_text("2026-12-07 ERROR the lorikeetfailure\n")  # said how to map it
    (docs / "manual.texi").write_text("@node Top\n@top The rosellamanual\n")
    (docs / "guide.pod").write_text("=head1 NAME\n\nthe cockatoopod\n")
    (docs / "count.awk").write_text('{ n++ } END { print n, "emuawk" }\n')
    (docs / "fix.sed").write_text("s/brolgabad/good/g\n")
    (docs / "backup.service").write_text("[Service]\nExecStart=/usr/bin/galahbackup\n")
    (docs / "MORE.STUFF").write_text("More documents on the bettongstuff.\n")  # capitals: a name
    (docs / "SETUP.EXE").write_bytes(ELF)  # and a binary one left out unreported
    (docs / "libfoo.so.1").write_bytes(ELF)  # the rest of the name decides: .so, no parser
    (docs / "notes.md.1").write_text("# Old notes\n\nthe quendanotes\n")  # a rotation: Markdown
    (docs / "app.log.1").write_text("the rotated lorikeetlog\n")  # a log, as app.log
    (docs / "photo.jpg_large").write_bytes(PNG)
    (docs / "notes.md~").write_text("an editor's backup of the jabirunotes\n")  # stays out
    with shelf:
        sync = shelf.index([docs], "test").sync
        assert sorted(sync.added) == [
            "History.600", "MORE.STUFF", "backup.service", "count.awk", "fix.sed", "guide.pod",
            "manual.texi", "node.1.gz", "notes.md.1", "releases/v2.30-ReleaseNotes.gz",
        ]  # fmt: skip
        skipped = {s.path: s.reason.split(";")[0] for s in sync.skipped}
        assert skipped == {
            "notes.md~": "no parser for .md~", "app.log": "no parser for .log",
            "app.log.1": "no parser for .1", "libfoo.so.1": "no parser for .1",
        }  # fmt: skip
        types = {d.path: d.file_type for d in shelf.list_documents("test")}
        assert types["History.600"] == "text" and types["count.awk"] == "awk"
        assert types["notes.md.1"] == "markdown"
        assert types["backup.service"] == "ini"
        for word, path in [
            ("kookaburrafix", "releases/v2.30-ReleaseNotes.gz"), ("galahrelease", "History.600"),
            ("bettongstuff", "MORE.STUFF"),
            ("currawongruntime", "node.1.gz"),
            ("rosellamanual", "manual.texi"), ("cockatoopod", "guide.pod"), ("emuawk", "count.awk"),
            ("brolgabad", "fix.sed"),
        ]:  # fmt: skip
            hits = shelf.search(word, k=3, mode="keyword").hits
            assert hits and hits[0].path == path, word


def test_a_template_or_example_is_read_as_the_file_it_stands_for(shelf: Shelf, tmp_path: Path) -> None:
    """/usr/share/doc's pkcs11.conf.example and PostgreSQL's refint.example were "no parser for
    .example"; config.yaml.dist, config.h.in and the like are the same: the name inside decides."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pkcs11.conf.example").write_text("[module]\nname = the-quendamodule\n")
    (docs / "compose.yml.dist").write_text("services:\n  web:\n    image: tuan-image\n")
    (docs / "config.h.in").write_text("#define NUMBAT_VERSION @VERSION@\n")
    (docs / "refint.example").write_text("-- the potoroo trigger example\n")  # no format inside: text
    (docs / "page.html.tmpl").write_text("<html><body><h1>Pademelon</h1><p>the {{.Name}}</p></body></html>")
    (docs / "logo.png.example").write_bytes(PNG)  # a binary format inside: not read
    (docs / "notes.md.orig").write_text("# Old\n\nthe stale wallaroo notes\n")  # a leftover copy: not read
    with shelf:
        sync = shelf.index([docs], "test").sync
        assert sorted(sync.added) == [
            "compose.yml.dist", "config.h.in", "page.html.tmpl", "pkcs11.conf.example", "refint.example",
        ]  # fmt: skip
        types = {d.path: d.file_type for d in shelf.list_documents("test")}
        assert types == {
            "compose.yml.dist": "yaml", "config.h.in": "c", "page.html.tmpl": "html",
            "pkcs11.conf.example": "ini", "refint.example": "text",
        }  # fmt: skip
        assert shelf.search("pademelon", k=1, mode="keyword").hits[0].heading_path == ["Pademelon"]
        assert {s.path for s in sync.skipped} == {"logo.png.example", "notes.md.orig"}


def test_a_private_key_taken_for_its_content_stays_out(shelf: Shelf, tmp_path: Path) -> None:
    """An extension-less id_rsa (or id_ed25519, a PEM key) read as text put a private key in the
    index, for any agent to search and read; it is no document: left out, like a program."""
    docs = tmp_path / "docs"
    (docs / "deploy").mkdir(parents=True)
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    (docs / "deploy" / "id_ed25519").write_text(
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}-----END OPENSSH PRIVATE KEY-----\n"
    )
    rsa = f"\n-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\n"
    (docs / "deploy" / "tls_key").write_text(rsa)
    (docs / "deploy" / "signing.2024").write_text(f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{body}")
    (docs / "deploy" / "README").write_text(  # a document that shows what a key looks like is kept
        "Keys look like this:\n-----BEGIN OPENSSH PRIVATE KEY-----\n(the wallaroo example)\n"
    )
    with shelf:
        sync = shelf.index([docs], "test").sync
        assert sync.added == ["deploy/README"] and sync.skipped == []
