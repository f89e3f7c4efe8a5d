"""A generated corpus of malformed and hostile files (>= 200), each with what indexing must do.

``expect`` per file: "skip" (must be reported as skipped, with a reason) or "any" (indexed or
skipped with a reason, but accounted for: never a crash, never silently dropped).
"""

from __future__ import annotations

import io
import os
import random
import zipfile
from pathlib import Path
from typing import NamedTuple

__all__ = ["make_hostile_corpus", "minimal_pdf", "valid_bomb"]


def minimal_pdf(lines: list[str]) -> bytes:
    """A valid one-page PDF with a text layer."""
    content = b"BT /F1 12 Tf 72 720 Td 14 TL " + b"".join(b"(%s) Tj T* " % s.encode() for s in lines) + b"ET"
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
        b"/Contents 5 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for num, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % num + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 6\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def _encrypted_pdf() -> bytes:
    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(minimal_pdf(["secret plans"]))))
    writer.encrypt("user-password", "owner-password", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


ENCRYPTED_PDF = b""  # filled on first use (pypdf import is slow-ish)


def _zip(members: dict[str, bytes], lie: int | None = None) -> bytes:
    """A zip archive; ``lie`` rewrites every member's declared size (a forged header)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    raw = bytearray(buf.getvalue())
    if lie is not None:  # patch the central directory's uncompressed sizes
        pos = 0
        while (pos := raw.find(b"PK\x01\x02", pos)) >= 0:
            raw[pos + 24 : pos + 28] = lie.to_bytes(4, "little")
            pos += 4
    return bytes(raw)


def _bomb(name: str, unpacked_mb: int) -> bytes:
    """A zip whose one XML member unpacks to ``unpacked_mb`` MB (compresses ~1000:1)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open(name, "w", force_zip64=True) as member:
            block = b"<w:p><w:r><w:t>a</w:t></w:r></w:p>" * 30_000  # ~1 MB
            for _ in range(unpacked_mb):
                member.write(block)
        archive.writestr("[Content_Types].xml", "<Types/>")
    return buf.getvalue()


_BOMB_PARTS = {  # kind: (main part, where the repeated unit goes, unit)
    "docx": ("word/document.xml", b"<w:body>", b"<w:p><w:r><w:t>lol</w:t></w:r></w:p>"),
    "xlsx": (
        "xl/worksheets/sheet1.xml",
        b"<sheetData>",
        b'<row><c t="inlineStr"><is><t>x</t></is></c></row>',
    ),
    "pptx": ("ppt/slides/slide1.xml", b"<a:t>", b"lol lol lol "),
}


def _skeleton(kind: str) -> bytes:
    buf = io.BytesIO()
    if kind == "docx":
        import docx

        document = docx.Document()
        document.add_paragraph("x")
        document.save(buf)
    elif kind == "xlsx":
        import openpyxl  # type: ignore[import-untyped]

        book = openpyxl.Workbook()
        book.active["A1"] = "x"
        book.save(buf)
    else:
        import pptx

        deck = pptx.Presentation()
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = "x"
        deck.save(buf)
    return buf.getvalue()


def valid_bomb(kind: str, unpacked_mb: int) -> bytes:
    """A well-formed Office file whose main XML part is ``unpacked_mb`` MB of repeated content."""
    source = zipfile.ZipFile(io.BytesIO(_skeleton(kind)))
    part, anchor, unit = _BOMB_PARTS[kind]
    xml = source.read(part)
    cut = xml.index(anchor) + len(anchor)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            if info.filename != part:
                archive.writestr(info.filename, source.read(info.filename))
        with archive.open(part, "w", force_zip64=True) as member:
            member.write(xml[:cut])
            block = unit * (1_000_000 // len(unit))
            for _ in range(unpacked_mb):
                member.write(block)
            member.write(xml[cut:])
    return out.getvalue()


def make_hostile_corpus(
    root: Path, seed: int = 0, bomb_mb: int = 2, long_chars: int = 200_000
) -> dict[str, str]:
    """Write the corpus under ``root``; returns {relative path: expect}.

    ``bomb_mb``: unpacked size of the well-formed Office bombs; ``long_chars``: length of the
    single-line files. The bench raises both.
    """
    global ENCRYPTED_PDF
    if not ENCRYPTED_PDF:
        ENCRYPTED_PDF = _encrypted_pdf()
    rng = random.Random(seed)
    files: dict[str, tuple[bytes, str]] = {}
    pdf = minimal_pdf(["hello from a valid pdf", "second line"])
    for i in range(24):  # truncated PDFs: header kept, cut anywhere
        cut = 9 + (len(pdf) - 10) * i // 24
        files[f"pdf/truncated-{i:02d}.pdf"] = (pdf[:cut], "any")
    for i in range(6):
        files[f"pdf/encrypted-{i}.pdf"] = (ENCRYPTED_PDF, "skip")
    for i in range(10):  # garbage that claims to be a PDF
        files[f"pdf/garbage-{i}.pdf"] = (b"%PDF-1.7\n" + rng.randbytes(2000), "skip")
    files["pdf/not-a-pdf.pdf"] = (b"GIF89a" + bytes(100), "skip")
    for ext in ("docx", "xlsx", "pptx"):  # zip bombs: forged headers, real bombs, not zips
        files[f"office/forged-size.{ext}"] = (_zip({"word/document.xml": b"<x/>" * 100}, 0xFFFFFFF0), "skip")
        files[f"office/not-a-zip.{ext}"] = (rng.randbytes(3000), "skip")
        files[f"office/empty-zip.{ext}"] = (_zip({}), "skip")
        files[f"office/wrong-parts.{ext}"] = (_zip({"hello.txt": b"hi"}), "skip")
    files["office/bomb-over-cap.docx"] = (_bomb("word/document.xml", 600), "skip")
    for kind in ("docx", "xlsx", "pptx"):  # well-formed, under the cap: parsed, at a cost in RSS
        files[f"office/bomb-under-cap.{kind}"] = (valid_bomb(kind, bomb_mb), "any")
    for i in range(20):  # UTF-8 with a few invalid bytes: read as UTF-8, U+FFFD in their place
        good = "Grüße aus Köln. ".encode() * (i + 1)
        files[f"text/bad-utf8-{i:02d}.{['txt', 'md', 'py', 'rst', 'json'][i % 5]}"] = (
            good + bytes([0xC3, 0x28, 0xFF, 0xFE][i % 4 :]) + good, "any")  # fmt: skip
    for i in range(12):  # UTF-16 without a byte-order mark: read (its NULs fall in place)
        text = ("Hello, world. Überall Text. " * (i + 2)).encode("utf-16-le" if i % 2 else "utf-16-be")
        files[f"text/utf16-nobom-{i:02d}.{['txt', 'md', 'csv'][i % 3]}"] = (text, "any")
    for i in range(12):  # NUL bytes inside otherwise fine text
        files[f"text/nul-{i:02d}.{['txt', 'md', 'html', 'py'][i % 4]}"] = (
            b"# Title\n\nsome text" + b"\x00" * (i + 1) + b" more text\n", "skip")  # fmt: skip
    for ext in ("md", "txt", "rst", "pdf", "docx", "xlsx", "pptx", "html", "csv", "json", "py", "yaml",
                "toml", "tsv", "xlsm"):  # fmt: skip
        files[f"empty/zero.{ext}"] = (b"", "any")
    for i in range(16):  # deeply nested / unclosed markup
        depth = 2000 * (i + 1)
        tag = ["div", "ul><li", "table><tr><td", "blockquote", "span", "section", "b", "p"][i % 8]
        body = f"<{tag}>" * depth + "deep text" + ("" if i % 2 else f"</{tag.split('><')[0]}>" * depth)
        files[f"html/nested-{i:02d}.html"] = (f"<html><body>{body}</body></html>".encode(), "any")
    files["html/unclosed-comment.html"] = (b"<html><!-- never closed " + b"x" * 10000, "any")
    files["html/bad-charset.html"] = (b'<meta charset="no-such-codec"><p>\xff\xfe</p>', "any")
    for i, ext in enumerate(("txt", "md", "py", "csv", "json", "rst", "html", "yaml")):  # very long lines
        line = ("word " * (long_chars // 5)) if i % 2 else ("x" * long_chars)
        files[f"long/line-{i}.{ext}"] = ((line + "\n").encode(), "any")
    files["long/many-columns.csv"] = ((",".join(f"c{i}" for i in range(20000)) + "\n").encode() * 3, "any")
    files["long/many-blank-lines.md"] = (b"\n" * long_chars + b"end\n", "any")
    laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join([f'*{chr(97 + n)}'] * 9)}]\n" for n in range(8)
    )
    headers = [b"title: [unclosed\n", b": :\n", b"!!python/object/apply:os.system [echo]\n",
               b"a: &a [*a]\n", laughs.encode(), b"date: 2024-13-45\n"]  # fmt: skip
    for i in range(12):  # frontmatter that must be refused, not crash the sync or blow up memory
        files[f"odd/frontmatter-{i:02d}.md"] = (b"---\n" + headers[i % 6] + b"---\ntext %d\n" % i, "skip")
    for i in range(10):
        files[f"odd/control-{i:02d}.md"] = (
            ("# T\n\n" + "".join(chr(c) for c in range(1, 32) if c not in (10, 13)) * (i + 1)
             + "\x7f\u2028\ufeff\n")
            .encode(), "any")  # fmt: skip
    for i in range(6):
        ole = b"\xd0\xcf\x11\xe0" + rng.randbytes(500)  # legacy Office (OLE) header
        files[f"odd/legacy-{i}.{['doc', 'xls', 'ppt'][i % 3]}"] = (ole, "skip")
    for i in range(14):  # control characters in file names (content is fine)
        name = ["tab\t", "nl\n", "esc\x1b[31m", "bell\x07", "del\x7f", "cr\r", "vt\x0b"][i % 7] + f"-{i}.md"
        files[f"names/{name}"] = (b"# Named oddly\n\nperfectly fine text\n", "any")
    for i in range(8):  # the rest of the 0..31 control range and lookalikes
        files[f"names/ctl{chr(1 + i)}{i}.txt"] = (b"fine text\n", "any")
    written = {}
    for rel, (data, expect) in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written[rel] = expect
    for i in range(6):  # file names that are not valid UTF-8 (bytes as Linux allows)
        raw = os.fsencode(root / "names") + b"/bad-\xff\xfe" + str(i).encode() + b".md"
        with open(raw, "wb") as fh:
            fh.write(b"# Latin-1 name\n\ntext\n")
        written[os.fsdecode(raw)[len(str(root)) + 1 :]] = "any"
    sizes = [("sparse/huge.txt", 4 << 30), ("sparse/huge.pdf", 3 << 30), ("sparse/big.md", 60 << 20),
             ("sparse/zeros-under-cap.txt", 40 << 20)]  # fmt: skip
    for name, size in sizes:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            fh.truncate(size)  # sparse: no disk used
        written[name] = "skip"
    return written


def printable(rel: str) -> str:
    """How docshelf reports a path whose bytes are not UTF-8."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# `docshelf index` in a process that records, at exit, its own peak RSS (VmHWM: since exec) and that
# of the children it waited for (the parse worker, and through it tesseract), separately. Not wait4's
# ru_maxrss: Linux carries the parent's RSS across fork + exec into it, so from a test process that
# holds 600 MB (the full suite's, models loaded) every child "peaks" at 600 MB.
_MEASURED = """
import atexit, json, resource, sys
def _peaks(path=sys.argv.pop(1)):
    own = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    with open(path, "w") as f:  # children: an upper bound (it includes this process's RSS at their start)
        json.dump({"self": own, "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}, f)
atexit.register(_peaks)  # registered first, so it runs last: after the parse worker has been stopped
from docshelf.cli import main
sys.argv[0] = "docshelf"
main()
"""


class Peaks(NamedTuple):
    """Peak RSS in KiB of the `docshelf index` process itself and of its children (the parse worker)."""

    own: int
    children: int


def index_hostile(
    root: Path, data: Path, env: dict[str, str]
) -> tuple[int, str, dict[str, str], set[str], Peaks]:
    """Run `docshelf index --json` on ``root``: (exit code, stderr, {skipped: reason}, indexed, peak RSS)."""
    import json
    import sqlite3
    import subprocess
    import sys

    peaks_path = data.parent / "hostile-peaks.json"
    cmd = [sys.executable, "-c", _MEASURED, str(peaks_path)]
    cmd += ["index", str(root), "--data-dir", str(data), "--json"]
    out_path, err_path = data.parent / "hostile-out.json", data.parent / "hostile-err.txt"
    with open(out_path, "w+b") as out, open(err_path, "w+b") as err:
        proc = subprocess.run(cmd, env=env, stdout=out, stderr=err, check=False)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode("utf-8", "replace")
    skipped: dict[str, str] = {}
    indexed: set[str] = set()
    peaks = Peaks(0, 0)
    if proc.returncode == 0:
        report = json.loads(stdout)
        skipped = {s["path"]: s["reason"] for s in report["skipped"]}
        conn = sqlite3.connect(data / "docshelf.db")
        indexed = {r[0] for r in conn.execute("SELECT path FROM documents")}
        conn.close()
        measured = json.loads(peaks_path.read_text())
        peaks = Peaks(int(measured["self"]), int(measured["children"]))
    return proc.returncode, stderr, skipped, indexed, peaks
