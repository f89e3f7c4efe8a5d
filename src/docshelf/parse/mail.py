"""E-mail: single messages (.eml), mailboxes (.mbox) and Outlook messages (.msg).

Each message is a heading (its subject) with a line of who wrote to whom and when, then its
text: the plain-text parts that are not attachments, else the HTML part's text; attachments
are named, not read. ``.msg`` files are OLE compound files read with olefile (BSD licence;
extract-msg is GPL and much larger), their 8-bit strings in the message's own code page.
"""

from __future__ import annotations

import codecs
import email
import re
import struct
from email import policy
from email.message import EmailMessage, Message
from typing import Any

from docshelf.errors import ParseError
from docshelf.parse.assemble import TextBuilder, missing_library
from docshelf.types import ParsedDocument

__all__ = ["EmlParser", "MboxParser", "MsgParser"]

_MBOX_FROM = re.compile(rb"(?:^|\n)From [^\n]*\n")
_MAX_MESSAGES = 100_000
MAX_MIME_DEPTH = 100
"""Deeper nesting is refused: real mail nests a few levels, and the standard library's parser
recurses once per level (a thousand levels overflowed its stack)."""


class _TooDeep(Exception):
    pass


def _parse(data: bytes) -> EmailMessage:
    """One message, parsed; _TooDeep when its parts nest deeper than MAX_MIME_DEPTH."""
    try:
        message = email.message_from_bytes(data, policy=policy.default)
    except RecursionError:
        raise _TooDeep from None
    if _depth(message) > MAX_MIME_DEPTH:
        raise _TooDeep
    assert isinstance(message, EmailMessage)  # policy.default's message class
    return message


def _depth(message: Message) -> int:
    """How deep ``message``'s parts nest (1: not multipart), counted without recursion."""
    deepest = 0
    stack = [(message, 1)]
    while stack:
        part, depth = stack.pop()
        deepest = max(deepest, depth)
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list) and depth <= MAX_MIME_DEPTH:
            stack.extend((p, depth + 1) for p in payload if isinstance(p, Message))
    return deepest


def _too_deep(path: str) -> ParseError:
    return ParseError(
        f"{path}: MIME parts nested deeper than {MAX_MIME_DEPTH} levels (no real mail nests so deep); "
        "exclude it"
    )


def _html_text(html: str, path: str) -> str:
    from docshelf.parse.html import HtmlParser

    try:
        return HtmlParser().parse(html.encode("utf-8"), path).text
    except ParseError:
        return ""


def _part_text(part: Message) -> str:
    try:
        content = part.get_content() if isinstance(part, EmailMessage) else None
    except (LookupError, UnicodeError, AssertionError):  # an unknown or wrong charset
        content = None
    if isinstance(content, str):
        return content
    payload = part.get_payload(decode=True)
    if isinstance(payload, bytes):
        return payload.decode(part.get_content_charset() or "utf-8", "replace")
    return ""


def _add_message(builder: TextBuilder, message: Message, path: str, level: int = 1) -> str:
    """Add one message; its subject."""
    subject = " ".join(str(message.get("Subject", "") or "").split())
    builder.heading(subject or "(no subject)", level)
    who = [
        f"{k}: {' '.join(str(message.get(k)).split())}"
        for k in ("From", "To", "Cc", "Date")
        if message.get(k)
    ]
    builder.add("\n".join(who))
    plain: list[str] = []
    html: list[str] = []
    attachments: list[str] = []
    for part in message.walk():
        if part.is_multipart():
            continue
        filename = part.get_filename()
        disposition = (part.get_content_disposition() or "").lower()
        if filename or disposition == "attachment":
            attachments.append(filename or part.get_content_type())
            continue
        if part.get_content_type() == "text/plain":
            plain.append(_part_text(part))
        elif part.get_content_type() == "text/html":
            html.append(_part_text(part))
    texts = plain or [_html_text(h, path) for h in html]
    for text in texts:
        for paragraph in re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n")):
            builder.add(paragraph)
    if attachments:
        builder.add("Attachments: " + ", ".join(attachments))
    return subject


class EmlParser:
    """One e-mail message (RFC 5322)."""

    name: str = "email"
    extensions: tuple[str, ...] = (".eml",)
    binary: bool = True  # 8-bit bodies are common

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read the message in ``data``."""
        try:
            message = _parse(data)
        except _TooDeep:
            raise _too_deep(path) from None
        if not message.keys():
            raise ParseError(f"{path}: is not an e-mail message (no headers); exclude it")
        builder = TextBuilder()
        subject = _add_message(builder, message, path)
        return ParsedDocument(
            text=builder.text, sections=builder.sections, file_type=self.name, title=subject or None
        )


class MboxParser:
    """A Unix mailbox: every message under its subject."""

    name: str = "mbox"
    extensions: tuple[str, ...] = (".mbox", ".mbx")
    binary: bool = True

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read every message of the mailbox in ``data``."""
        starts = [m.end() for m in _MBOX_FROM.finditer(data)][:_MAX_MESSAGES]
        if not starts:
            raise ParseError(f"{path}: is not an mbox mailbox (no 'From ' line); exclude it")
        ends = [*(m.start() for m in _MBOX_FROM.finditer(data)), len(data)][1 : len(starts) + 1]
        builder = TextBuilder()
        too_deep = 0
        for start, end in zip(starts, ends, strict=True):
            raw = re.sub(rb"(?m)^>(>*From )", rb"\1", data[start:end])  # mboxrd quoting
            try:
                message = _parse(raw)
            except _TooDeep:
                too_deep += 1
                continue
            _add_message(builder, message, path)
        if too_deep == len(starts):
            raise _too_deep(path)
        metadata: dict[str, Any] = {"messages": len(starts)}
        if too_deep:
            metadata["unreadable_messages"] = too_deep  # nested deeper than MAX_MIME_DEPTH
        return ParsedDocument(
            text=builder.text,
            sections=builder.sections,
            file_type=self.name,
            metadata=metadata,
        )


# MAPI properties of an Outlook message (id, as in __substg1.0_IIIITTTT stream names)
_SUBJECT, _BODY, _HTML, _SENDER, _TO, _CC = 0x0037, 0x1000, 0x1013, 0x0C1A, 0x0E04, 0x0E03
_CODEPAGES = (0x3FFD, 0x3FDE)  # PR_MESSAGE_CODEPAGE, PR_INTERNET_CPID


class MsgParser:
    """Outlook .msg: subject, sender and recipients, and the body (the HTML body's text when
    there is no plain one)."""

    name: str = "msg"
    extensions: tuple[str, ...] = (".msg",)
    binary: bool = True

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Read the message in the OLE file ``data``."""
        try:
            import olefile
        except ImportError:
            raise missing_library(path, "Outlook .msg files", "olefile") from None
        if not data.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
            raise ParseError(f"{path}: is not an Outlook message (not an OLE file); exclude it")
        try:
            ole = olefile.OleFileIO(data)
        except Exception as exc:
            raise ParseError(
                f"{path}: damaged Outlook message ({type(exc).__name__}: {exc}); exclude it"
            ) from None
        with ole:
            msg = _Msg(ole)
            subject = msg.string(_SUBJECT)
            body = msg.string(_BODY)
            if not body.strip():
                body = _html_text(msg.string(_HTML), path)
            people = [f"{label}: {msg.string(prop)}" for label, prop in (("From", _SENDER), ("To", _TO),
                      ("Cc", _CC)) if msg.string(prop)]  # fmt: skip
        builder = TextBuilder()
        builder.heading(subject or "(no subject)", 1)
        builder.add("\n".join(people))
        for paragraph in re.split(r"\n[ \t]*\n", body.replace("\r\n", "\n")):
            builder.add(paragraph)
        return ParsedDocument(
            text=builder.text, sections=builder.sections, file_type=self.name, title=subject or None
        )


class _Msg:
    def __init__(self, ole: Any) -> None:
        self.ole = ole
        self.codepage = "cp1252"
        try:
            props = ole.openstream("__properties_version1.0").read()
        except OSError:
            props = b""
        for pos in range(32, len(props) - 15, 16):  # the top-level header is 32 bytes
            tag, _, value = struct.unpack_from("<II8s", props, pos)
            if tag >> 16 in _CODEPAGES and tag & 0xFFFF == 0x0003:
                code = struct.unpack_from("<i", value)[0]
                name = "utf-8" if code == 65001 else f"cp{code}"
                try:
                    self.codepage = codecs.lookup(name).name
                    break
                except LookupError:
                    continue

    def string(self, prop: int) -> str:
        """A string property: Unicode (001F), 8-bit (001E) or binary (0102, for the HTML body)."""
        for kind, decode in (("001F", "utf-16-le"), ("001E", self.codepage), ("0102", None)):
            name = f"__substg1.0_{prop:04X}{kind}"
            if not self.ole.exists(name):
                continue
            raw = self.ole.openstream(name).read()
            if decode is None:
                raw = raw.rstrip(b"\x00")
                from docshelf.parse.decode import read_text

                try:
                    return read_text(raw, name)[0]
                except ParseError:
                    return str(raw.decode(self.codepage, "replace"))
            return str(raw.decode(decode, "replace")).rstrip("\x00")
        return ""
