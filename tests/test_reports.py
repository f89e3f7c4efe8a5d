"""Skip reports and text hygiene: reasons once per file, grouped; no empty documents; no crash
on unencodable code points; library chatter goes to the log."""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

import pytest

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.index.sync import Indexer, group_skipped, reason_kind
from docshelf.parse import default_registry
from docshelf.parse.clean import clean_text
from docshelf.parse.decode import read_text
from docshelf.parse.quiet import native_stderr_to_log
from docshelf.shelf import Shelf
from docshelf.testing import Stages
from docshelf.types import ParsedDocument, Section, SkippedFile


class _NoisyParser:
    """Returns text with a lone surrogate (as pypdf does for some fonts) and warns."""

    name = "noisy"
    extensions = (".noisy",)
    binary = False

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        warnings.warn("the style sheet is odd", UserWarning, stacklevel=1)
        text = data.decode() + " broken \ud800 glyph"
        return ParsedDocument(text, [Section(0, len(text), "paragraph", ("Head \udfff",))], self.name,
                              title="T\ud83d", metadata={"fonts": ["F\udc80"]})  # fmt: skip


def _indexer(stages: Stages) -> Indexer:
    registry = default_registry()
    registry.register(_NoisyParser())
    return Indexer(stages.store, stages.embedder, stages.settings, registry)


def test_lone_surrogates_are_cleaned_once_at_parse_time_and_the_file_indexes(
    stages: Stages, tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.noisy").write_text("quokka text", encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="docshelf.parse"):
        report = _indexer(stages).sync("test", [tmp_path / "c"])
    assert report.added == ["a.noisy"] and report.skipped == []
    doc = stages.store.get_document("test", "a.noisy")
    assert doc is not None and doc.title == "T\ufffd" and doc.metadata["fonts"] == ["F\ufffd"]
    (chunk,) = stages.store.document_chunks(doc.id)
    assert chunk.text == "quokka text broken \ufffd glyph"
    assert chunk.heading_path == ("Head \ufffd",)
    # the parser's UserWarning went to the log, not the terminal
    assert "the style sheet is odd" in caplog.text
    assert "style sheet" not in capsys.readouterr().err


def test_clean_text_keeps_offsets() -> None:
    text = "a\ud800b\ufffec\U0001f600"
    assert clean_text(text) == "a\ufffdb\ufffdc\U0001f600"
    assert len(clean_text(text)) == len(text)


def test_empty_documents_are_skipped_as_no_text_and_reasons_name_the_file_once(
    shelf: Shelf, tmp_path: Path
) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "empty.txt").write_bytes(b"")
    (corpus / "blank.md").write_text("---\ntitle: Only metadata\n---\n\n   \n", encoding="utf-8")
    (corpus / "noise.txt").write_bytes(bytes(range(1, 256)) * 20)
    (corpus / "ok.md").write_text("# Fine\n\nA real paragraph.\n", encoding="utf-8")
    report = shelf.index([corpus], "test").sync
    reasons = {s.path: s.reason for s in report.skipped}
    assert report.added == ["ok.md"]
    assert reasons["empty.txt"].startswith("no text") and reasons["blank.md"].startswith("no text")
    assert all(path not in reason for path, reason in reasons.items())
    by_kind = report.skipped_by_kind()
    assert by_kind["no text"] == ["blank.md", "empty.txt"]
    assert by_kind["no text encoding fits its bytes"] == ["noise.txt"]
    assert report.as_dict()["skipped_by_kind"] == {"no text": 2, "no text encoding fits its bytes": 1}


def test_reason_kinds_generalise_numbers_and_details() -> None:
    assert reason_kind("too large (51.2 MB > 50 MB cap; raise sources.max_file_mb)") == "too large"
    assert reason_kind("no parser for .xyz") == "no parser for .xyz"
    assert reason_kind("is password-protected (encrypted PDF); save an unprotected copy") == (
        "is password-protected"
    )
    assert reason_kind("image has 200 megapixels (over 150)") == "image has N megapixels"
    groups = group_skipped([SkippedFile("a", "binary file"), SkippedFile("b", "no text: x"),
                            SkippedFile("c", "binary file")])  # fmt: skip
    assert list(groups.items()) == [("binary file", ["a", "c"]), ("no text", ["b"])]


def test_native_stderr_output_goes_to_the_log(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="docshelf.parse"):
        with native_stderr_to_log("scan.tif"), native_stderr_to_log("nested.tif"):
            os.write(2, b"TIFFReadDirectory: Warning, Unknown field with tag 292\n")
        os.write(2, b"after\n")
    err = capfd.readouterr().err
    assert "TIFFReadDirectory" not in err and "after" in err
    assert "scan.tif: TIFFReadDirectory: Warning" in caplog.text


def test_utf8_with_a_few_bad_bytes_is_read_as_utf8_not_as_mojibake() -> None:
    good = "Grüße aus Köln. ".encode() * 3
    text, encoding = read_text(good + b"\xc3\x28" + good, "x.txt")
    assert encoding == "utf-8" and text.count("Grüße") == 6 and "\ufffd" in text


def test_onnxruntime_advice_on_the_root_logger_is_demoted_to_debug() -> None:
    from docshelf.embed._e5_onnx import _OnnxAdvice

    where = "/x/onnxruntime/quantization/quant_utils.py"
    text = "Please consider to run pre-processing before quantization."
    advice = logging.LogRecord("root", logging.WARNING, where, 1, text, None, None)
    ours = logging.LogRecord("root", logging.WARNING, "/x/docshelf/cli/main.py", 1, "keep me", None, None)
    demote = _OnnxAdvice()
    assert demote.filter(advice) is False and demote.filter(ours) is True


class SlowHere(HashEmbedder):
    """Embeds as the hash embedder, and says it ran on a slower runtime than it should."""

    def slow_note(self) -> str | None:
        return "hash ran on an abacus: much slower"


def test_an_index_run_says_when_the_model_ran_slower_than_it_should(
    shelf_settings: Settings, tmp_path: Path
) -> None:
    """A fallback runtime or a rejected int8 copy halves the indexing speed: the log line went
    unseen, so the run's report says it, when that run embedded."""
    corpus = tmp_path / "notes"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n\nSome text to embed.\n", encoding="utf-8")
    with Shelf(shelf_settings, embedder=SlowHere()) as shelf:
        first = shelf.index([corpus], keyword_only=True)
        assert first.sync.chunks_embedded == 0 and first.notes == []
        second = shelf.index([corpus])
        assert second.sync.chunks_embedded > 0 and second.notes == ["hash ran on an abacus: much slower"]
    with Shelf(shelf_settings, embedder=HashEmbedder()) as shelf:
        (corpus / "b.md").write_text("# B\n\nMore text.\n", encoding="utf-8")
        assert shelf.index([corpus]).notes == []
