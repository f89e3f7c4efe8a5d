"""The terminal gets docshelf's words: other libraries' warnings only with -v, and the first-run
model preparation announced by docshelf."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docshelf.cli import app
from docshelf.cli.logs import setup_logging
from docshelf.embed import HashEmbedder, Vectors
from docshelf.embed.prepare import preparing
from docshelf.parse.markdown import MarkdownParser
from docshelf.types import ParsedDocument

ONNX_NOISE = "Please consider to run pre-processing before quantization."


@pytest.fixture
def root_logging() -> Iterator[None]:
    """setup_logging changes the root logger: put it back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    logging.captureWarnings(False)  # an earlier in-process CLI run may have left it on
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    logging.captureWarnings(False)


@pytest.mark.usefixtures("root_logging")
@pytest.mark.parametrize("verbose", [False, True])
def test_other_libraries_speak_only_with_verbose(verbose: bool, capsys: pytest.CaptureFixture[str]) -> None:
    setup_logging(verbose)
    logging.warning(ONNX_NOISE)  # what onnxruntime.quantization does, on the root logger
    logging.getLogger("openpyxl.reader").warning("third-party logger")
    logging.getLogger("uvicorn.error").error("[Errno 98] address already in use")
    logging.getLogger("docshelf.index").warning("docshelf's own warning")
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("docshelf.index").exception("unexpected error parsing a.pdf")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        logging.captureWarnings(True)  # pytest's own capture replaced the hook: take it back
        warnings.warn("File contains an invalid specification", UserWarning, stacklevel=1)
    err = capsys.readouterr().err
    assert "docshelf's own warning" in err and "unexpected error parsing a.pdf" in err
    assert "address already in use" in err  # another library's error is always said
    assert (ONNX_NOISE in err) is verbose
    assert ("third-party logger" in err) is verbose
    assert ("File contains an invalid specification" in err) is verbose
    assert ("Traceback" in err) is verbose  # a logged exception is one line unless -v
    if not verbose:
        assert "warning: docshelf's own warning" in err.splitlines()


@pytest.mark.usefixtures("root_logging")
def test_parsing_libraries_chatter_only_with_verbose(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, corpus: Path
) -> None:
    """A parser library that warns (openpyxl's UserWarning) and logs (Pillow's TIFF plugin) while
    a file is read: `index` prints neither, `-v index` both."""
    real_parse = MarkdownParser.parse

    def chatty(self: MarkdownParser, data: bytes, path: str) -> ParsedDocument:
        warnings.warn(f"Workbook contains no default style ({path})", UserWarning, stacklevel=1)
        logging.getLogger("PIL.TiffImagePlugin").warning("TIFFReadDirectory: unknown field 65000")
        return real_parse(self, data, path)

    monkeypatch.setattr(MarkdownParser, "parse", chatty)
    monkeypatch.setenv("DOCSHELF_PARSE__ISOLATE", "false")  # the patched parser lives in this process
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    for verbose, data_dir in ((False, "quiet"), (True, "loud")):  # a fresh index: every file parsed
        monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / data_dir))
        result = CliRunner().invoke(app, ["-v"] * verbose + ["index", str(corpus)])
        assert result.exit_code == 0 and "added" in result.stderr
        assert ("no default style" in result.stderr) is verbose
        assert ("TIFFReadDirectory" in result.stderr) is verbose


def test_first_run_model_preparation_is_announced(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, corpus: Path
) -> None:
    """The seam: an embedder that prepares itself on first use, as e5 does (tested in test_e5)."""
    prepared: list[bool] = []
    embed = HashEmbedder.embed_documents

    def first_use_prepares(self: HashEmbedder, texts: Sequence[str]) -> Vectors:
        if not prepared:
            with preparing("building the test model in /tmp/cache (first use only)"):
                prepared.append(True)
        return embed(self, texts)

    monkeypatch.setattr(HashEmbedder, "embed_documents", first_use_prepares)
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(app, ["index", str(corpus)])
    assert result.exit_code == 0
    lines = result.stderr.splitlines()
    start = lines.index("building the test model in /tmp/cache (first use only) ...")
    assert lines[start + 1].startswith("  done in ") and lines[start + 1].endswith("s")
    assert "added" in result.stderr.split("done in", 1)[1]  # announced before the summary
