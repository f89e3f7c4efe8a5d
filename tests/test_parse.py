"""Parsing: decoding, frontmatter, Markdown / reST / text structure, the registry."""

from __future__ import annotations

import codecs

import pytest

from docshelf.errors import ParseError
from docshelf.parse import (
    MarkdownParser,
    Parser,
    ParserRegistry,
    RstParser,
    TextParser,
    decode_text,
    default_registry,
)
from docshelf.types import ParsedDocument, Section


def md(source: str) -> ParsedDocument:
    return MarkdownParser().parse(source.encode(), "doc.md")


def rst(source: str) -> ParsedDocument:
    return RstParser().parse(source.encode(), "doc.rst")


def texts(doc: ParsedDocument, kind: str | None = None) -> list[str]:
    return [doc.text[s.start : s.end] for s in doc.sections if kind is None or s.kind == kind]


def headings(doc: ParsedDocument) -> list[Section]:
    return [s for s in doc.sections if s.kind == "heading"]


def assert_well_formed(doc: ParsedDocument) -> None:
    """Sections are in order, disjoint, trimmed, and cover all non-blank body text."""
    covered = [False] * len(doc.text)
    prev_end = doc.body_start
    for s in doc.sections:
        assert prev_end <= s.start < s.end <= len(doc.text)
        assert not doc.text[s.start].isspace() and not doc.text[s.end - 1].isspace()
        covered[s.start : s.end] = [True] * (s.end - s.start)
        prev_end = s.end
    missing = [
        i for i in range(doc.body_start, len(doc.text)) if not covered[i] and not doc.text[i].isspace()
    ]
    assert missing == []


# -- decoding ----------------------------------------------------------------


def test_utf8_bom_is_stripped() -> None:
    assert decode_text(codecs.BOM_UTF8 + "héllo".encode(), "a.txt") == "héllo"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_with_bom_decodes(codec: str) -> None:
    data = codecs.BOM_UTF16_LE if codec.endswith("le") else codecs.BOM_UTF16_BE
    doc = MarkdownParser().parse(data + "# Titel\n\nÜber 中文.\n".encode(codec), "x.md")
    assert doc.title == "Titel"
    assert texts(doc) == ["# Titel", "Über 中文."]


def test_legacy_encodings_are_detected_and_recorded() -> None:
    doc = TextParser().parse("café au lait, s'il vous plaît".encode("latin-1"), "notes.txt")
    assert doc.text == "café au lait, s'il vous plaît"
    assert doc.metadata["encoding"] == "cp1252"
    russian = "Однажды, в студеную зимнюю пору, я из лесу вышел; был сильный мороз.\n"
    doc = TextParser().parse(russian.encode("cp866"), "poem.txt")
    assert doc.text == russian
    assert "encoding" not in TextParser().parse(b"plain", "a.txt").metadata  # UTF-8 goes unsaid
    # a line of French in Latin-1 was read as Baltic cp1257 ("crčme", "franēais")
    french = "Le crème brûlée est un dessert français. Naïve façade, élève, déjà vu, à la carte, maître."
    assert TextParser().parse(french.encode("latin-1"), "f.txt").text == french
    lithuanian = (
        "Lietuvos Respublikos Seimas priėmė įstatymą dėl švietimo ir mokslo. Vaikų darželiai gaus lėšų."
    )
    assert TextParser().parse(lithuanian.encode("cp1257"), "lt.txt").metadata["encoding"] == "cp1257"


# Each of these was read in the wrong code page before readings were checked for letters no one
# alphabet holds together (the wrong reading after the arrow).
MISREAD = [
    ("Le comité a décidé que la crème brûlée serait servie à la fête de Noël.", "cp1252"),  # cp775 "comitķ"
    ("Vi måste åka till Göteborg på fredag; där är vädret bättre än i Malmö.", "cp1252"),  # hp-roman8
    ("La città è più bella di quanto pensassi; perché non andiamo là, così vediamo?", "cp1252"),  # cp1258
    ("Yarın Ankara'ya gideceğiz; orada hava daha güzel ve çocuklar okumayı öğreniyor.", "cp1254"),  # cp1252
    ("Árvíztűrő tükörfúrógép; holnap Budapestre megyünk, ahol az időjárás jobb.", "cp1250"),  # cp1252
    ("Sutra idemo u Zagreb, gdje je vrijeme bolje nego u Splitu; djeca uče u školi čitati.", "cp1250"),
    ("Wczoraj byliśmy w kinie na świetnym filmie; później poszliśmy do restauracji.", "cp1250"),  # cp852
    ("Über die Brücke gehen täglich viele Fußgänger; die Größe der Städte wächst.", "cp850"),  # mac-iceland
    ("Eile käisime teatris ja pärast läksime restorani õhtust sööma, šokolaadikooki.", "cp1257"),  # cp1252
    ("He said “we’ll ship it on Monday” — but the notes didn’t mention it… £5 only.", "cp1252"),  # cp1250
]


@pytest.mark.parametrize(("text", "codec"), MISREAD)
def test_legacy_code_pages_are_not_misread(text: str, codec: str) -> None:
    doc = TextParser().parse(text.encode(codec), "legacy.txt")
    assert doc.text == text


def test_a_text_mixing_two_languages_keeps_its_code_page() -> None:
    # Portuguese and Spanish lines: no one alphabet has both "ã" and "ñ", two do
    mixed = "Port ABC não contabilize\nPort ABC doação uno negócios\nespañol ABC adhoc prácticas\n" * 3
    assert TextParser().parse(mixed.encode("cp1252"), "m.txt").text == mixed


def test_vietnamese_cp1258_tone_marks_still_read() -> None:
    # cp1258 writes a tone as a combining mark where it has no whole letter: "ệ" is "ê" + U+0323
    data = (
        "Ti\u00eang Vi\u00ea\u0323t c\u00f3 nhi\u00ea\u0300u d\u00e2\u0301u, ng\u01b0\u01a1\u0300i "
        "d\u00e2n r\u00e2\u0301t th\u00e2n thi\u00ea\u0323n. "
    )
    doc = TextParser().parse(data.encode("cp1258") * 3, "vi.txt")
    assert doc.metadata["encoding"] == "cp1258"


def test_bytes_no_encoding_fits_are_refused_with_that_reason() -> None:
    noise = bytes(range(1, 256)) * 20
    with pytest.raises(ParseError, match=r"no text encoding fits"):
        TextParser().parse(noise, "blob.txt")


def test_utf16_without_bom_is_read_not_garbled() -> None:
    # refused as binary before (it has NULs); more cases in test_encodings.py. Under eight
    # NULs is too little evidence to tell it from junk, so the text is a sentence, not a word.
    text = "plain words here"
    assert decode_text(text.encode("utf-16-le"), "x.txt") == text


def test_crlf_is_kept_so_offsets_match_the_file() -> None:
    source = "# One\r\n\r\nfirst para\r\nsame para\r\n\r\n## Two\r\ntext\r\n"
    doc = md(source)
    assert doc.text == source
    assert texts(doc) == ["# One", "first para\r\nsame para", "## Two", "text"]
    assert [s.heading_path for s in doc.sections][-1] == ("One", "Two")
    assert_well_formed(doc)


# -- frontmatter ---------------------------------------------------------------


def test_frontmatter_fields_land_in_metadata_and_never_in_body() -> None:
    doc = md(
        "---\ntitle: Guide\ntags: [ops, db]\nrag: false\nlifecycle: deprecated\n---\n# Heading\n\nBody.\n"
    )
    assert doc.metadata == {"title": "Guide", "tags": ["ops", "db"], "rag": False, "lifecycle": "deprecated"}
    assert doc.title == "Guide"  # frontmatter wins over the first H1
    assert doc.text[doc.body_start :] == "# Heading\n\nBody.\n"
    assert all(s.start >= doc.body_start for s in doc.sections)


def test_frontmatter_may_close_with_dots_and_be_empty() -> None:
    doc = md("---\n...\nBody text.\n")
    assert doc.metadata == {}
    assert texts(doc) == ["Body text."]


def test_malformed_frontmatter_names_the_line() -> None:
    with pytest.raises(ParseError, match=r"doc\.md: malformed frontmatter at line 3: mapping values"):
        md("---\ntitle: ok\nsummary: a: b\n---\nbody\n")
    with pytest.raises(ParseError, match=r"flow sequence started at line 3\)"):
        md("---\ntitle: ok\ntags: [unclosed\n---\nbody\n")


def test_non_mapping_frontmatter_is_rejected() -> None:
    with pytest.raises(ParseError, match="not a mapping"):
        md("---\n- just\n- a list\n---\nbody\n")


def test_impossible_date_in_frontmatter_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="malformed frontmatter"):
        md("---\ndate: 2024-13-45\n---\nbody\n")


def test_unclosed_frontmatter_is_a_thematic_break_and_text_is_kept() -> None:
    doc = md("---\ntitle: x\n\nbody\n")
    assert doc.metadata == {} and doc.body_start == 0
    assert_well_formed(doc)


# -- markdown structure ------------------------------------------------------


def test_heading_paths_follow_nesting() -> None:
    doc = md("# A\n\nintro\n\n## B\n\nb text\n\n### C ###\n\nc text\n\n## D\n\nd text\n")
    paths = {doc.text[s.start : s.end]: s.heading_path for s in doc.sections}
    assert paths == {
        "# A": ("A",),
        "intro": ("A",),
        "## B": ("A", "B"),
        "b text": ("A", "B"),
        "### C ###": ("A", "B", "C"),
        "c text": ("A", "B", "C"),
        "## D": ("A", "D"),
        "d text": ("A", "D"),
    }
    assert [h.level for h in headings(doc)] == [1, 2, 3, 2]
    assert doc.title == "A"


def test_hash_lines_inside_fences_are_not_headings() -> None:
    doc = md("# Real\n\n```bash\n# a comment\nls\n```\n\n~~~~\n## also code\n~~~~\n\nafter\n")
    assert [h.heading_path for h in headings(doc)] == [("Real",)]
    assert texts(doc, "code") == ["```bash\n# a comment\nls\n```", "~~~~\n## also code\n~~~~"]
    assert_well_formed(doc)


def test_unclosed_fence_runs_to_the_end() -> None:
    doc = md("text\n\n```\n# not a heading\n")
    assert headings(doc) == []
    assert texts(doc, "code") == ["```\n# not a heading"]


def test_setext_headings_and_thematic_breaks() -> None:
    doc = md("Title\n=====\n\nSub part\n--------\n\ntext\n\n---\n\nmore\n")
    assert [(h.level, h.heading_path) for h in headings(doc)] == [(1, ("Title",)), (2, ("Title", "Sub part"))]
    assert doc.title == "Title"
    assert "---" in texts(doc, "text")  # a rule after a blank line is no heading
    assert_well_formed(doc)


def test_lists_tables_and_paragraphs_are_blocks() -> None:
    doc = md(
        "Para one\nwraps.\n\n- a\n- b\n\n  still b\n\n1. x\n2. y\n\n| h | i |\n|---|:-:|\n| 1 | 2 |\n\n"
        "    indented code\n\nend\n"
    )
    kinds = [s.kind for s in doc.sections]
    assert kinds == ["paragraph", "list", "table", "code", "paragraph"]
    # Items after a blank line, and indented continuations, stay in the list.
    assert texts(doc, "list") == ["- a\n- b\n\n  still b\n\n1. x\n2. y"]
    assert_well_formed(doc)


def test_heading_titles_drop_inline_markup() -> None:
    doc = md("# The **`docshelf`** [guide](https://example.com/x) #\n\ntext\n")
    assert doc.title == "The docshelf guide"
    assert doc.sections[1].heading_path == ("The docshelf guide",)


def test_hashtag_is_not_a_heading_and_no_h1_means_no_title() -> None:
    doc = md("#hashtag text\n\n## Second level only\n")
    assert [h.level for h in headings(doc)] == [2]
    assert doc.title is None


# -- reStructuredText and plain text -----------------------------------------


def test_rst_levels_follow_first_appearance_of_each_style() -> None:
    doc = rst(
        "=====\nGuide\n=====\n\nIntro.\n\nInstall\n-------\n\n"
        "Run it::\n\n    pip install x\n    # not a title\n\n"
        "Linux\n~~~~~\n\nNotes.\n\nUsage\n-------\n\n.. code-block:: python\n\n   print(1)\n\nDone.\n"
    )
    assert doc.title == "Guide"
    assert [(h.level, h.heading_path) for h in headings(doc)] == [
        (1, ("Guide",)),
        (2, ("Guide", "Install")),
        (3, ("Guide", "Install", "Linux")),
        (2, ("Guide", "Usage")),
    ]
    assert texts(doc, "code") == ["pip install x\n    # not a title", ".. code-block:: python\n\n   print(1)"]
    assert_well_formed(doc)


def test_rst_transition_is_not_a_title() -> None:
    doc = rst("Para.\n\n----------\n\nMore.\n")
    assert headings(doc) == []
    assert texts(doc) == ["Para.", "----------", "More."]


def test_plain_text_paragraphs() -> None:
    doc = TextParser().parse(b"  one\ntwo  \n\n\n# not a heading\r\n\r\nthree", "a.txt")
    assert texts(doc) == ["one\ntwo", "# not a heading", "three"]
    assert doc.title is None and all(s.kind == "paragraph" for s in doc.sections)
    assert_well_formed(doc)


# -- registry ------------------------------------------------------------------


def test_registry_maps_extensions_case_insensitively() -> None:
    reg = default_registry()
    assert all(isinstance(p, Parser) for p in (MarkdownParser(), TextParser(), RstParser()))
    assert isinstance(reg.for_path("docs/README.MD"), MarkdownParser)
    assert isinstance(reg.for_path("a.markdown"), MarkdownParser)
    assert isinstance(reg.for_path("notes.Text"), TextParser)
    assert isinstance(reg.for_path("x.rst"), RstParser)
    assert reg.for_path("image.gif") is None and reg.for_path("archive.tar.gz") is None
    assert isinstance(reg.for_path("README"), TextParser)  # by name: see test_named_files.py
    assert {".md", ".txt", ".rst", ".text", ".markdown"} <= set(reg.supported_extensions)
    assert ".pdf" in reg.binary_extensions and not {".md", ".txt", ".rst"} & set(reg.binary_extensions)
    assert default_registry() is not reg  # no shared mutable singleton


def test_registry_refuses_silent_overrides() -> None:
    class Other:
        name = "other"
        extensions = ("MD",)
        binary = True

        def parse(self, data: bytes, path: str) -> ParsedDocument:
            return ParsedDocument(text="", sections=[], file_type="other")

    reg = default_registry()
    with pytest.raises(ValueError, match="already handled"):
        reg.register(Other())
    reg.register(Other(), replace=True)
    assert reg.parse(b"%PDF", "a.md").file_type == "other"
    assert ".md" in reg.binary_extensions
    with pytest.raises(ParseError, match="no parser"):
        ParserRegistry().parse(b"", "a.md")
