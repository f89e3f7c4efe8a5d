"""Made-up PDFs with the font set-ups the text-layer tests need (fonts mapped to CJK through a
ToUnicode CMap, CID fonts without one, form fields), written object by object."""

from __future__ import annotations

HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def stream(content: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d " % len(content) + extra + b">>\nstream\n" + content + b"\nendstream"


def build(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (numbered from 1; object 1 is the catalog)."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def pages_pdf(contents: list[bytes], fonts: list[bytes], extra: list[bytes] = ()) -> bytes:  # type: ignore[assignment]
    """One page per content stream, each with fonts /F1, /F2, ... (``fonts``); ``extra``
    objects follow them (a font's ToUnicode stream or descendant, numbered from there)."""
    n = len(contents)
    first_font = 3 + 2 * n
    font_refs = b" ".join(b"/F%d %d 0 R" % (k + 1, first_font + k) for k in range(len(fonts)))
    kids = b" ".join(b"%d 0 R" % (3 + 2 * i) for i in range(n))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n)]
    for i, content in enumerate(contents):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << "
            + font_refs
            + b" >> >> /Contents %d 0 R >>" % (4 + 2 * i)
        )
        objects.append(stream(content))
    return build([*objects, *fonts, *extra])


def latin_line(text: str, x: int, y: int, font: int = 1, size: int = 11) -> bytes:
    escaped = text.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
    return b"BT /F%d %d Tf %d %d Td (" % (font, size, x, y) + escaped + b") Tj ET\n"


class MappedFont:
    """A simple font whose one-byte codes a ToUnicode CMap maps to any characters (CJK too)."""

    def __init__(self, text: str, tounicode_object: int) -> None:
        self.chars = list(dict.fromkeys(ch for ch in text if not ch.isspace()))
        assert len(self.chars) < 200
        self.font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode %d 0 R >>" % (
            tounicode_object
        )
        pairs = b" ".join(b"<%02X> <%04X>" % (0x21 + i, ord(ch)) for i, ch in enumerate(self.chars))
        self.cmap = stream(
            b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Mapped def "
            b"1 begincodespacerange <00> <FF> endcodespacerange %d beginbfchar "
            % len(self.chars)
            + pairs
            + b" endbfchar endcmap CMapName currentdict /CMap defineresource pop end end"
        )

    def codes(self, text: str) -> bytes:
        return b"<" + bytes(0x21 + self.chars.index(ch) for ch in text).hex().encode() + b">"

    def vertical(self, columns: list[str], font: int, x: int = 540, y: int = 720) -> bytes:
        """Columns of vertical writing from right to left, each character its own text object
        (as typesetting programs write it)."""
        out = b""
        for i, column in enumerate(columns):
            for j, ch in enumerate(column):
                at = b"BT /F%d 14 Tf %d %d Td " % (font, x - 20 * i, y - 16 * j)
                out += at + self.codes(ch) + b" Tj ET\n"
        return out


def identity_font(first_object: int) -> list[bytes]:
    """A Type0 font with Identity-H codes and no ToUnicode map, not embedded (the font, its
    descendant and descriptor, numbered from ``first_object``): extractors can only guess what
    its two-byte codes (glyph numbers) stand for."""
    return [
        b"<< /Type /Font /Subtype /Type0 /BaseFont /Batang /Encoding /Identity-H "
        b"/DescendantFonts [%d 0 R] >>" % (first_object + 1),
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Batang /CIDSystemInfo << /Registry (Adobe) "
        b"/Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R /CIDToGIDMap /Identity /DW 500 >>"
        % (first_object + 2),
        b"<< /Type /FontDescriptor /FontName /Batang /Flags 4 /FontBBox [0 -120 1000 880] /ItalicAngle 0 "
        b"/Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 >>",
    ]


def glyph_codes(text: str, first: int = 0xAC00) -> bytes:
    """``text`` as the glyph numbers a big (Korean) font gives its letters: from ``first`` on,
    in alphabetical order, spaces left out as a typesetter's positioning does."""
    letters = sorted(set(text) - {" "})
    return b"<" + b"".join(b"%04X" % (first + 3 * letters.index(ch)) for ch in text if ch != " ") + b">"
