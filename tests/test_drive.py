"""Google Drive links through the real gdown functions; only the transport is local.

requests' HTTPAdapter.send is wrapped to send drive.google.com, drive.usercontent.google.com
and docs.google.com requests to a fake Drive on 127.0.0.1 (any other host fails the test),
so gdown's own URL handling, folder listing, confirmation page and Google Docs export run.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import docx
import pytest
import requests.adapters
from typer.testing import CliRunner

from docshelf.cli import app
from docshelf.config import Settings
from docshelf.shelf import Shelf
from docshelf.sources.drive import file_url
from docshelf.sources.remote import Gathered
from docshelf.sources.remote import gather as fetch_urls
from localhttp import Reply, Seen, Server, serve

FOLDER = "1FoLdEr0000000000000000000000000A"
SUB = "1SuBfOlDeR000000000000000000000B"
NOTES, BIG, PLAN, ZIP, OLD = (f"1{n}{'x' * 28}" for n in ("NOTES", "BIGGG", "PLANN", "ZIPPP", "OLDDD"))
DRIVE = "https://drive.google.com"


def _docx(text: str) -> bytes:
    document = docx.Document()
    document.add_heading("Plan", 1)
    document.add_paragraph(text)
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


class FakeDrive:
    """Enough of Drive's public endpoints for gdown: listing, download, confirm, export."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[str, bytes]] = {
            NOTES: ("notes.md", b"# Notes\n\nThe pager rotation changes on Mondays.\n"),
            BIG: ("big.txt", b"Large file behind the virus-scan warning: lighthouse keepers.\n" * 3000),
            ZIP: ("photos.zip", b"PK\x03\x04 not really"),
            OLD: ("old.md", b"# Old\n\nArchived minutes about the harbour crane.\n"),
        }
        self.plan = _docx("Budget review every quarter.")  # once: a docx embeds its save time
        self.listing = {FOLDER: ("Team docs", [NOTES, BIG, PLAN, ZIP], [SUB]), SUB: ("Archive", [OLD], [])}

    def folder(self, req: Seen) -> Reply:
        fid = parse_qs(urlsplit(req.path).query)["id"][0]
        if fid not in self.listing:
            return Reply(404, b"", {"Content-Type": "text/html"})
        title, files, subs = self.listing[fid]
        links = [
            f'<a href="{DRIVE}/file/d/{f}/view?usp=drive_web">{self.files[f][0]}</a>'
            for f in files
            if f != PLAN
        ]
        if PLAN in files:
            links.append(f'<a href="https://docs.google.com/document/d/{PLAN}/edit?usp=drive_web">Plan</a>')
        links += [f'<a href="{DRIVE}/drive/folders/{s}">{self.listing[s][0]}</a>' for s in subs]
        body = f"<html><head><title>{title}</title></head><body>{''.join(links)}</body></html>"
        return Reply(200, body.encode(), {"Content-Type": "text/html; charset=utf-8"})

    def uc(self, req: Seen) -> Reply:
        fid = parse_qs(urlsplit(req.path).query)["id"][0]
        if fid == PLAN:  # a Google Doc: Drive answers 500 and gdown goes through /open
            return Reply(500, b"", {"Content-Type": "text/html"})
        where = f"https://drive.usercontent.google.com/download?id={fid}&export=download"
        return Reply(303, b"", {"Location": where, "Content-Type": "text/html"})

    def usercontent(self, req: Seen) -> Reply:
        query = parse_qs(urlsplit(req.path).query)
        fid = query["id"][0]
        if fid == BIG and query.get("confirm") != ["t"]:
            hidden = {"id": BIG, "export": "download", "confirm": "t", "uuid": "u-1"}
            inputs = "".join(f'<input type="hidden" name="{k}" value="{v}">' for k, v in hidden.items())
            action = "https://drive.usercontent.google.com/download"
            # one line: gdown reads the page line by line
            form = f'<form id="download-form" action="{action}" method="get">{inputs}</form>'
            return Reply(200, f"<html><body>{form}</body></html>".encode(), {"Content-Type": "text/html"})
        name, data = self.files[fid]
        headers = {
            "Content-Type": "application/octet-stream",
            "Content-Disposition": f'attachment; filename="{name}"',
        }
        return Reply(200, data, headers)

    def routes(self) -> dict[str, Any]:
        doc = f"/docs.google.com/document/d/{PLAN}"
        return {
            "/drive.google.com/embeddedfolderview": self.folder,
            "/drive.google.com/uc": self.uc,
            "/drive.google.com/open": lambda r: Reply(
                302,
                b"",
                {"Location": f"https://docs.google.com/document/d/{PLAN}/edit", "Content-Type": "text/html"},
            ),
            f"{doc}/edit": lambda r: Reply(200, b"<html>editor</html>", {"Content-Type": "text/html"}),
            f"{doc}/export": lambda r: Reply(
                200,
                self.plan,
                {
                    "Content-Type": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                    "Content-Disposition": 'attachment; filename="Plan.docx"',
                },
            ),
            "/drive.usercontent.google.com/download": self.usercontent,
        }


@pytest.fixture
def drive(monkeypatch: pytest.MonkeyPatch) -> Any:
    fake = FakeDrive()
    with serve(fake.routes()) as server:
        original = requests.adapters.HTTPAdapter.send

        def send(self: requests.adapters.HTTPAdapter, request: Any, **kw: Any) -> Any:
            parts = urlsplit(request.url)
            assert parts.hostname in (
                "drive.google.com",
                "drive.usercontent.google.com",
                "docs.google.com",
            ), f"the test tried to reach {request.url}"
            request.url = f"{server.base}/{parts.hostname}{parts.path}" + (
                f"?{parts.query}" if parts.query else ""
            )
            return original(self, request, **kw)

        monkeypatch.setattr(requests.adapters.HTTPAdapter, "send", send)
        yield fake, server


def gather(settings: Settings, args: list[str], known: list[str] | None = None) -> Gathered:
    """Fetch as `docshelf index URL` does: only files a parser reads are downloaded."""
    from docshelf.parse import default_registry

    registry = default_registry(settings)
    return fetch_urls(settings, args, known or (), supported=lambda rel: registry.for_path(rel) is not None)


def downloads(server: Server) -> list[str]:
    return [parse_qs(urlsplit(p).query)["id"][0] for p in server.paths() if "usercontent" in p]


def test_folder_files_are_documents_with_their_drive_urls(shelf: Shelf, drive: Any) -> None:
    fake, server = drive
    url = f"{DRIVE}/drive/folders/{FOLDER}?usp=sharing"
    indexed = shelf.index([url], "test")
    report = indexed.sync
    assert sorted(report.added) == ["Archive/old.md", "Plan.docx", "big.txt", "notes.md"]
    assert indexed.fetched == 4
    assert [(s.path, s.reason.split(";")[0]) for s in report.skipped] == [
        ("photos.zip", "unsupported file type .zip")
    ]
    assert ZIP not in downloads(server)  # skipped files are never downloaded
    assert downloads(server).count(BIG) == 2  # the confirmation page, then the file

    docs = {d.path: d.metadata for d in shelf.list_documents("test")}
    assert docs["notes.md"]["source_url"] == file_url(NOTES) and docs["notes.md"]["source"] == "drive"
    assert docs["Archive/old.md"]["source_url"] == file_url(OLD)
    hit = shelf.search("budget review quarter", mode="keyword").hits[0]
    assert hit.path == "Plan.docx" and hit.citation == file_url(PLAN)
    hit = shelf.search("lighthouse keepers", mode="keyword").hits[0]
    assert hit.citation == f"https://drive.google.com/file/d/{BIG}/view"

    # a file removed from the folder is removed from the index on the next sync (which fetches
    # the folder's listing again)
    fake.listing[FOLDER] = ("Team docs", [NOTES, BIG, PLAN], [SUB])
    del fake.files[ZIP]
    report = shelf.index([], "test").sync
    assert report.removed == [] and report.unchanged == 4
    fake.listing[FOLDER] = ("Team docs", [BIG, PLAN], [SUB])
    assert shelf.index([], "test").sync.removed == ["notes.md"]


def test_drive_size_limit_skips_the_file_and_the_batch_goes_on(settings: Settings, drive: Any) -> None:
    settings.web.max_mb = 0.1  # 100 KB: big.txt (190 KB) is over it, the rest is not
    fetched = gather(settings, [f"{DRIVE}/drive/folders/{FOLDER}"])
    reasons = {s.path: s.reason for s in fetched.skipped}
    assert "web.max_mb" in reasons["big.txt"] and fetched.fetched == 3
    assert not list(fetched.roots[0].rglob("*.part")) and not (fetched.roots[0] / "big.txt").exists()


def test_single_file_link_from_the_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, drive: Any) -> None:
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    link = f"{DRIVE}/file/d/{NOTES}/view?usp=sharing"
    cli = CliRunner()
    result = cli.invoke(app, ["index", link, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["added"] == 1
    result = cli.invoke(app, ["search", "pager rotation", "--json", "--mode", "keyword"])
    assert json.loads(result.stdout)["hits"][0]["citation"] == link


def test_unreachable_folder_is_reported_not_raised(settings: Settings, drive: Any) -> None:
    fetched = gather(settings, [f"{DRIVE}/drive/folders/1NoSuChFoLdEr00000000000000000000"])
    assert fetched.roots == [] and "cannot list the Drive link" in fetched.skipped[0].reason


@pytest.mark.anyio
async def test_an_agents_ingest_of_an_unreachable_drive_link_is_an_error(
    settings: Settings, corpus: Path, shelf: Shelf, drive: Any
) -> None:
    """It was a result (isError false, added 0, no note) an agent could take for success."""
    from mcp import Client

    from docshelf.server import create_server
    from mcpkit import error_text

    link = f"{DRIVE}/drive/folders/1NoSuChFoLdEr00000000000000000000"
    shelf.index([corpus])
    async with Client(create_server(settings, shelf)) as client:
        text = error_text(await client.call_tool("ingest", {"path": link}))
    assert "nothing was fetched" in text and "cannot list the Drive link" in text, text


def test_one_mirror_per_drive_item_whatever_the_sharing_link() -> None:
    from docshelf.sources.drive import canonical_drive_url

    assert (
        canonical_drive_url(f"{DRIVE}/drive/folders/{FOLDER}?usp=sharing")
        == f"{DRIVE}/drive/folders/{FOLDER}"
    )
    assert canonical_drive_url(f"{DRIVE}/drive/u/0/folders/{FOLDER}") == f"{DRIVE}/drive/folders/{FOLDER}"
    links = [f"{DRIVE}/file/d/{NOTES}/view?usp=sharing", f"{DRIVE}/open?id={NOTES}", f"{DRIVE}/uc?id={NOTES}"]
    for link in [*links, f"https://docs.google.com/document/d/{NOTES}/edit"]:
        assert canonical_drive_url(link) == file_url(NOTES), link


def test_without_gdown_a_drive_link_is_skipped_with_the_install_hint(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "gdown", None)  # import gdown now raises ImportError
    fetched = gather(settings, [f"{DRIVE}/drive/folders/{FOLDER}"])
    assert fetched.roots == [] and "pip install 'docshelf[drive]'" in fetched.skipped[0].reason
    assert not (settings.store.data_dir / "sources").exists() or not any(
        (settings.store.data_dir / "sources").iterdir()
    )
