"""Legacy and wide encodings without a declaration: the reading that fits, or a refusal when none does."""

from __future__ import annotations

from pathlib import Path

import pytest

from docshelf.errors import ParseError
from docshelf.parse import TextParser, decode_text
from docshelf.parse.html import HtmlParser
from docshelf.sources import walk_roots

JAPANESE = (
    "今日は朝から雨が降っていましたが、午後になって晴れてきました。私たちは駅の近くの喫茶店で会議を"
    "開き、来月の計画について話し合いました。山田さんは新しい企画書を持ってきて、みんなに説明して"
    "くれました。来週の月曜日には、大阪の取引先を訪問する予定です。資料の準備は金曜日までに終わら"
    "せる必要があります。"
)
KOREAN = (
    "오늘은 날씨가 아주 좋습니다. 우리는 공원에 가서 산책을 하고 점심을 먹었습니다. 내일은 회사에서 "
    "중요한 회의가 있어서 일찍 일어나야 합니다. 친구들과 함께 저녁을 먹으면서 이야기를 나누었습니다."
)
# Real prose with dialogue: charset-normalizer rated ISO-8859-10 best ("zauwaŋyli") and never
# offered ISO-8859-2 (it skipped it as "too similar" to cp1250, which failed its chaos probe).
POLISH = """Rozdział pierwszy

Kiedy pociąg zatrzymał się na małej stacji, podróżni zauważyli, że peron jest zupełnie pusty. Nikt \
nie wysiadł i nikt nie wsiadł; tylko zawiadowca w granatowym mundurze przeszedł powoli wzdłuż wagonów \
i zajrzał do każdego okna.

Pani Zofia, która jechała do siostry mieszkającej nad morzem, wyjęła z torebki książkę i zaczęła \
czytać. Obok niej siedział młody student medycyny, zajęty notatkami z anatomii. Za oknem rozciągały \
się pola, gdzieniegdzie przecięte rzędem topoli, a nad horyzontem wisiały ciężkie, ołowiane chmury.

- Przepraszam - odezwał się w końcu student - czy pani wie, ile jeszcze potrwa postój?

Odpowiedziała, że nie ma pojęcia, ale że na tej linii zdarzają się opóźnienia, szczególnie jesienią, \
gdy liście zasypują tory. Rozmowa potoczyła się dalej: o studiach, o rodzinie, o tym, jak zmieniło \
się życie w mieście po wojnie. Wreszcie lokomotywa zagwizdała przeciągle i pociąg ruszył.
"""


def page(body: str) -> str:
    return f"<html><head><title>記録</title></head><body><h1>会議</h1><p>{body}</p></body></html>"


def test_euc_jp_html_without_a_charset_is_read_as_japanese() -> None:
    # Read as Big5 before: "、" and "。" between two ideographs counted as symbols inside a word
    doc = HtmlParser().parse(page(JAPANESE).encode("euc_jp"), "minutes.html")
    assert JAPANESE in doc.text
    assert doc.metadata["encoding"] == "euc_jp"


@pytest.mark.parametrize("codec", ["shift_jis", "cp932"])
def test_shift_jis_text_still_reads(codec: str) -> None:
    assert TextParser().parse(JAPANESE.encode(codec), "ja.txt").text == JAPANESE


def test_euc_kr_text_still_reads() -> None:
    assert TextParser().parse((KOREAN * 2).encode("euc_kr"), "ko.txt").text == KOREAN * 2


@pytest.mark.parametrize("repeat", [1, 3, 10])
def test_polish_latin2_prose_is_not_read_as_latin6(repeat: int) -> None:
    doc = TextParser().parse((POLISH * repeat).encode("iso8859_2"), "opowiadanie.txt")
    assert "zauważyli" in doc.text
    assert doc.text == POLISH * repeat
    assert doc.metadata["encoding"] == "iso8859-2"


@pytest.mark.parametrize("codec", ["iso2022_kr", "iso2022_jp"])
def test_iso_2022_text_is_decoded_not_passed_as_ascii(codec: str) -> None:
    text = KOREAN if codec.endswith("kr") else JAPANESE
    doc = TextParser().parse(text.encode(codec), "mail.txt")
    assert doc.text == text
    assert doc.metadata["encoding"] == codec


def test_ansi_colour_codes_in_a_log_stay_utf8() -> None:
    log = "\x1b[31mERROR\x1b[0m disk full on /var\n\x1b[32mOK\x1b[0m retried\n"
    doc = TextParser().parse(log.encode(), "run.txt")
    assert doc.text == log and "encoding" not in doc.metadata


WIDE = ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"]
HTML = (
    "<html><head><title>Quarterly report</title></head><body><h1>Results</h1>"
    "<p>Revenue grew by 12% in the third quarter; Привет, 東京.</p></body></html>"
)


@pytest.mark.parametrize("codec", WIDE)
@pytest.mark.parametrize("body", ["Revenue grew by 12% in the third quarter; Привет, 東京.", "Plain ASCII."])
def test_html_in_utf16_or_utf32_without_a_bom_is_read(codec: str, body: str) -> None:
    html = HTML.replace("Revenue grew by 12% in the third quarter; Привет, 東京.", body)
    doc = HtmlParser().parse(html.encode(codec), "report.html")
    assert doc.title == "Quarterly report"
    assert body in doc.text
    assert doc.metadata["encoding"] == codec


@pytest.mark.parametrize("codec", WIDE)
def test_the_walker_does_not_skip_bomless_utf16_or_utf32_as_binary(tmp_path: Path, codec: str) -> None:
    (tmp_path / "report.html").write_bytes(HTML.encode(codec))
    (tmp_path / "blob.html").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "zeros.html").write_bytes(b"\x01\x00\x02\x00\x03\x00" * 100)
    [(_, result)] = list(walk_roots([tmp_path]))
    assert [f.rel_path for f in result.files] == ["report.html"]
    assert {s.path for s in result.skipped} == {"blob.html", "zeros.html"}


def test_binary_with_nuls_is_still_refused() -> None:
    with pytest.raises(ParseError, match="NUL"):
        decode_text(b"\x01\x00\x02\x00\x03\x00\x04\x00" * 50, "x.txt")
    with pytest.raises(ParseError, match=r"NUL|no text encoding fits"):
        decode_text(b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" * 40, "x.txt")


def test_a_file_chosen_by_name_in_utf16_without_a_bom_reads_as_text() -> None:
    """A README saved as UTF-16 by a Windows editor: its NULs fall in place, it is no binary."""
    from docshelf.parse.decode import looks_like_text

    text = "Installation\n\nRun the installer, then restart the service.\n" * 4
    assert looks_like_text(text.encode("utf-16-le")) and looks_like_text(text.encode("utf-16-be"))
    assert not looks_like_text(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)


def test_a_few_bytes_with_a_nul_are_binary_not_utf16() -> None:
    """`x\\0\\1y` decodes as "x礁" in UTF-16-LE: four bytes are no evidence of text."""
    from docshelf.bomless import bomless_utf

    assert bomless_utf(b"x\x00\x01y") is None
    assert bomless_utf("Installation notes\n".encode("utf-16-le")) == "utf-16-le"
