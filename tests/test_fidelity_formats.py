"""Formats people have: OpenDocument, RTF, e-mail, Outlook, notebooks, AsciiDoc/Org/LaTeX/MDX,
extension mapping, and HTML charsets; every file is generated here."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from email.message import EmailMessage
from pathlib import Path

import pytest

from docshelf.config import load_settings
from docshelf.errors import ParseError
from docshelf.parse import default_registry
from docshelf.parse.html import HtmlParser
from docshelf.parse.mail import EmlParser, MboxParser, MsgParser
from docshelf.parse.notebook import NotebookParser
from docshelf.parse.odf import OdfParser
from docshelf.parse.rtf import RtfParser
from docshelf.shelf import Shelf
from olewriter import write_ole

NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
      'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
      'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
      'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
      'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
      'xmlns:dc="http://purl.org/dc/elements/1.1/"')  # fmt: skip


def odf(body: str, encrypted: bool = False) -> bytes:
    manifest = ('<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                '<manifest:file-entry manifest:full-path="content.xml">'
                + ('<manifest:encryption-data manifest:checksum="x"/>' if encrypted else "")
                + "</manifest:file-entry></manifest:manifest>")  # fmt: skip
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        z.writestr("META-INF/manifest.xml", manifest)
        z.writestr("content.xml", f"<office:document-content {NS}><office:body>{body}</office:body>"
                   "</office:document-content>")  # fmt: skip
        z.writestr("meta.xml", f"<office:document-meta {NS}><office:meta><dc:title>Odf Title</dc:title>"
                   "</office:meta></office:document-meta>")  # fmt: skip
    return out.getvalue()


def test_odt_headings_spans_notes_comments_tables() -> None:
    body = """<office:text><text:tracked-changes><text:changed-region><text:deletion>
      <text:p>RemovedDingo</text:p></text:deletion></text:changed-region></text:tracked-changes>
      <text:h text:outline-level="1">Marsupials</text:h>
      <text:p>The <text:span>quokka</text:span><text:s text:c="2"/>smiles<text:note>
        <text:note-citation>1</text:note-citation>
        <text:note-body><text:p>FootnoteBilby source</text:p></text:note-body>
        </text:note>.</text:p>
      <text:p><office:annotation><dc:creator>Annabel</dc:creator><dc:date>2020</dc:date><text:p>CommentPossum</text:p>
        </office:annotation>Annotated line</text:p>
      <table:table><table:table-row><table:table-cell><text:p>cell one</text:p></table:table-cell>
        <table:table-cell><text:p>cell two</text:p></table:table-cell></table:table-row></table:table>
    </office:text>"""
    doc = OdfParser().parse(odf(body), "a.odt")
    assert doc.title == "Odf Title"
    assert "The quokka  smiles." in doc.text  # <text:s text:c="2"/> is two spaces
    assert "Footnote: FootnoteBilby source" in doc.text and "Comment: CommentPossum" in doc.text
    assert "cell one | cell two" in doc.text
    assert "RemovedDingo" not in doc.text and "Annabel" not in doc.text
    smiles = next(s for s in doc.sections if "smiles" in doc.text[s.start : s.end])
    assert smiles.heading_path == ("Marsupials",)


def test_ods_sheets_and_odp_slides_with_notes() -> None:
    sheet = """<office:spreadsheet><table:table table:name="Census">
      <table:table-row><table:table-cell><text:p>animal</text:p></table:table-cell>
        <table:table-cell><text:p>count</text:p></table:table-cell></table:table-row>
      <table:table-row table:number-rows-repeated="2">
        <table:table-cell><text:p>wombat</text:p></table:table-cell>
        <table:table-cell table:number-columns-repeated="1"><text:p>3</text:p></table:table-cell>
      </table:table-row>
      <table:table-row table:number-rows-repeated="1048570">
        <table:table-cell table:number-columns-repeated="16384"/></table:table-row></table:table>
      </office:spreadsheet>"""
    doc = OdfParser().parse(odf(sheet), "s.ods")
    assert doc.metadata["sheets"] == ["Census"]
    assert "row 2: animal: wombat; count: 3" in doc.text and "row 3: animal: wombat" in doc.text
    slides = """<office:presentation><draw:page draw:name="Intro"><draw:frame><draw:text-box>
      <text:p>SlideQuoll text</text:p></draw:text-box></draw:frame>
      <presentation:notes><draw:frame><draw:text-box><text:p>NotesNumbat</text:p></draw:text-box></draw:frame>
      </presentation:notes></draw:page></office:presentation>"""
    doc = OdfParser().parse(odf(slides), "p.odp")
    assert "Slide 1: Intro" in doc.text and "SlideQuoll" in doc.text and "Notes: NotesNumbat" in doc.text
    assert {s.page for s in doc.sections} == {1}


def test_odf_password_and_damage_are_reported() -> None:
    with pytest.raises(ParseError, match="password-protected"):
        OdfParser().parse(odf("<office:text/>", encrypted=True), "secret.odt")
    with pytest.raises(ParseError, match="not a zip"):
        OdfParser().parse(b"not a zip at all", "bad.odt")


def test_rtf_code_page_escapes_and_characters_beyond_the_bmp() -> None:
    rtf = rb"{\rtf1\ansi\ansicpg1250{\fonttbl{\f0 Arial;}}\f0 Za\'bf\'f3\'b3\'e6 g\'ea\'9cl\'b9\par"
    rtf += rb" Gothic \u-10240?\u-8398? letter\par}"
    doc = RtfParser().parse(rtf, "pl.rtf")
    assert "Zażółć gęślą" in doc.text and "Gothic \U00010332 letter" in doc.text
    assert doc.metadata["encoding"] == "cp1250"
    with pytest.raises(ParseError, match="not an RTF"):
        RtfParser().parse(b"plain text", "x.rtf")


def _mail(subject: str, body: str, html: str | None = None) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"], msg["From"], msg["To"] = subject, "ranger@example.org", "office@example.org"
    msg.set_content(body)
    if html:
        msg.add_alternative(html, subtype="html")
    msg.add_attachment(b"%PDF-1.4 binary", maintype="application", subtype="pdf", filename="census.pdf")
    return msg


def test_eml_subject_people_plain_body_and_attachment_names() -> None:
    msg = _mail("Quokka census — résumé", "Dear team,\n\nWe counted 42 quokkas.", "<p>HtmlOnlyWords</p>")
    doc = EmlParser().parse(msg.as_bytes(), "m.eml")
    assert doc.title == "Quokka census — résumé"
    assert "We counted 42 quokkas." in doc.text and "From: ranger@example.org" in doc.text
    assert "HtmlOnlyWords" not in doc.text  # the plain part is the text; the HTML is its copy
    assert "Attachments: census.pdf" in doc.text and "PDF-1.4" not in doc.text
    html_only = EmailMessage()
    html_only["Subject"] = "Html"
    html_only.set_content("<html><body><p>Only <b>HTML</b> here</p></body></html>", subtype="html")
    assert "Only HTML here" in EmlParser().parse(html_only.as_bytes(), "h.eml").text


def test_mbox_holds_every_message() -> None:
    # in a mailbox, a body line starting with "From " is quoted as ">From "
    messages = [
        _mail(s, b).as_bytes().replace(b"\nFrom the", b"\n>From the")
        for s, b in (("First", "AlphaWombat body"), ("Second", "Hello\nFrom the start of a line\nBetaQuoll"))
    ]
    box = b"".join(b"From someone@example.org Mon Jan  1 00:00:00 2024\n" + m + b"\n" for m in messages)
    doc = MboxParser().parse(box, "box.mbox")
    assert doc.metadata["messages"] == 2
    assert "AlphaWombat" in doc.text and "BetaQuoll" in doc.text and "\nFrom the start" in doc.text
    assert [doc.text[s.start : s.end] for s in doc.sections if s.kind == "heading"] == ["First", "Second"]


def _nested_mail(depth: int, subject: str = "Russian dolls") -> bytes:
    body = "Content-Type: text/plain\r\n\r\nThe innermost doll says NestedNumbat.\r\n"
    for i in range(depth):
        body = f'Content-Type: multipart/mixed; boundary="b{i}"\r\n\r\n--b{i}\r\n{body}\r\n--b{i}--\r\n'
    head = f"From: a@example.org\r\nTo: b@example.org\r\nSubject: {subject}\r\nMIME-Version: 1.0\r\n"
    return (head + body).encode()


@pytest.mark.parametrize("depth", [150, 1000])
def test_mime_nested_too_deep_is_refused_with_that_reason(depth: int) -> None:
    with pytest.raises(ParseError, match=r"MIME parts nested deeper than 100 levels"):
        EmlParser().parse(_nested_mail(depth), "dolls.eml")


def test_mime_nesting_a_real_mail_has_is_read_and_a_mailbox_keeps_its_other_messages() -> None:
    assert "NestedNumbat" in EmlParser().parse(_nested_mail(20), "dolls.eml").text
    box = b"".join(
        b"From someone@example.org Mon Jan  1 00:00:00 2024\n" + m + b"\n"
        for m in (_mail("Plain", "KeptKookaburra").as_bytes(), _nested_mail(1000, "Deep"))
    )
    doc = MboxParser().parse(box, "box.mbox")
    assert "KeptKookaburra" in doc.text and "NestedNumbat" not in doc.text
    assert doc.metadata["unreadable_messages"] == 1


def test_outlook_msg_subject_in_its_code_page_and_body() -> None:
    props = bytes(32) + struct.pack("<II", 0x3FFD0003, 0) + struct.pack("<i", 1251) + bytes(4)
    data = write_ole({
        "__substg1.0_0037001E": "Привет квокка".encode("cp1251"),
        "__substg1.0_0C1A001F": "Ranger Rick".encode("utf-16-le"),
        "__substg1.0_1000001F": "Body of the message\r\n\r\nSecond para".encode("utf-16-le"),
        "__properties_version1.0": props,
    })  # fmt: skip
    doc = MsgParser().parse(data, "m.msg")
    assert doc.title == "Привет квокка"
    assert "From: Ranger Rick" in doc.text and "Second para" in doc.text
    html = write_ole({"__substg1.0_10130102": b"<html><body><p>HtmlBodyBandicoot</p></body></html>"})
    assert "HtmlBodyBandicoot" in MsgParser().parse(html, "h.msg").text
    with pytest.raises(ParseError, match="not an Outlook message"):
        MsgParser().parse(b"not ole", "x.msg")


def test_notebook_markdown_code_and_text_outputs() -> None:
    nb = {"nbformat": 4, "metadata": {"kernelspec": {"language": "python"}}, "cells": [
        {"cell_type": "markdown", "source": ["# Analysis\n", "\n", "Intro about wombats.\n"]},
        {"cell_type": "code", "source": "print(count_quokkas())", "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["StreamedNumbat 42\n"]},
            {"output_type": "execute_result", "data": {"text/plain": ["ResultBilby"], "image/png": "AAAA"}}]},
    ]}  # fmt: skip
    doc = NotebookParser().parse(json.dumps(nb).encode(), "n.ipynb")
    assert doc.title == "Analysis"
    for word in ("Intro about wombats.", "print(count_quokkas())", "StreamedNumbat 42", "ResultBilby"):
        assert word in doc.text
    assert "AAAA" not in doc.text
    code = next(s for s in doc.sections if "count_quokkas" in doc.text[s.start : s.end])
    assert code.kind == "code" and code.heading_path == ("Analysis",)


@pytest.mark.parametrize(
    ("name", "source", "title", "path"),
    [
        ("a.adoc", "= Guide\n\n== Install\n\nRun the installer.\n", "Guide", ("Guide", "Install")),
        ("a.org", "#+TITLE: Notes\n* Install\n** TODO Steps :work:\nRun the installer.\n", "Notes",
         ("Install", "Steps")),
        ("a.tex", "\\title{Paper}\n\\section{Install}\n\\subsection{The \\emph{first} steps}\n"
         "Run the installer.\n", "Paper", ("Install", "The first steps")),
        ("a.mdx", "import X from './x'\n\n# Guide\n\n## Install\n\nRun the installer.\n", "Guide",
         ("Guide", "Install")),
    ],
)  # fmt: skip
def test_light_markup_keeps_its_text_and_headings(
    name: str, source: str, title: str, path: tuple[str, ...]
) -> None:
    doc = default_registry().parse(source.encode(), name)
    assert doc.text == source  # offsets and line numbers cite the file
    assert doc.title == title
    run = next(s for s in doc.sections if "Run the installer." in doc.text[s.start : s.end])
    assert run.heading_path == path


def test_sources_extensions_map_more_extensions_to_parsers(shelf: Shelf, tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "guide.note").write_text("# Mapped\n\nMappedWombat text\n", encoding="utf-8")
    (corpus / "app.log").write_text("LoggedQuokka line\n", encoding="utf-8")
    shelf.settings.sources.extensions = {".note": "markdown", "log": ".txt"}
    report = shelf.index([corpus], "test").sync
    assert sorted(report.added) == ["app.log", "guide.note"] and report.skipped == []
    doc = shelf.find_document("guide.note", "test")
    assert doc.file_type == "markdown" and doc.title == "Mapped"
    with pytest.raises(ValueError, match="no parser name"):
        default_registry(load_settings(sources={"extensions": {".x": "nonsense"}}))


def test_html_charset_from_bom_late_meta_and_despite_a_wrong_declaration() -> None:
    utf16 = "<html><head><title>Заголовок</title></head><body><p>Привет мир</p></body></html>"
    doc = HtmlParser().parse(b"\xff\xfe" + utf16.encode("utf-16-le"), "a.html")
    assert doc.title == "Заголовок" and "Привет мир" in doc.text
    late = ("<html><head><!--" + "x" * 8000 + '--><meta charset="windows-1251"><title>Т</title></head>'
            "<body><p>Съешь же ещё этих мягких французских булок</p></body></html>")  # fmt: skip
    doc = HtmlParser().parse(late.encode("cp1251"), "late.html")
    assert "Съешь же ещё" in doc.text and doc.metadata["encoding"] == "cp1251"
    arabic = ("اللغة العربية هي أكثر اللغات تحدثا ونطقا ضمن مجموعة اللغات السامية، "
              "وإحدى أكثر اللغات انتشارا في العالم")  # fmt: skip
    wrong = f'<html><head><meta charset="UTF-8"></head><body><p>{arabic}</p></body></html>'.encode("cp1256")
    doc = HtmlParser().parse(wrong, "ar.html")
    assert arabic in doc.text and doc.metadata["encoding"] == "cp1256"
