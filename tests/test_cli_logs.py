"""The terminal gets docshelf's words: other libraries' warnings only with -v, and the first-run
model preparation announced by docshelf."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import warnings
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docshelf.cli import app
from docshelf.cli.logs import setup_logging
from docshelf.embed import HashEmbedder, Vectors
from docshelf.embed.prepare import preparing

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
    assert (ONNX_NOISE in err) is verbose
    assert ("third-party logger" in err) is verbose
    assert ("File contains an invalid specification" in err) is verbose
    assert ("Traceback" in err) is verbose  # a logged exception is one line unless -v
    if not verbose:
        assert "warning: docshelf's own warning" in err.splitlines()


def _xlsx_with_a_sheet_openpyxl_warns_about(path: Path) -> None:
    """A workbook whose workbook.xml lists a sheet without r:id: openpyxl warns, then reads it."""
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    wb.active["A1"] = "quarterly figures"
    buf = io.BytesIO()
    wb.save(buf)
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(path, "w") as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename == "xl/workbook.xml":
                body = body.replace(b"</sheets>", b'<sheet name="Ghost" sheetId="9"/></sheets>')
            dst.writestr(item, body)


def test_openpyxl_warning_goes_to_the_log_not_the_terminal(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    _xlsx_with_a_sheet_openpyxl_warns_about(docs / "figures.xlsx")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(DOCSHELF_EMBED__MODEL="hash", XDG_DATA_HOME=str(tmp_path / "xdg"))
    cmd = [sys.executable, "-m", "docshelf"]
    quiet = subprocess.run([*cmd, "index", str(docs)], env=env, capture_output=True, text=True)
    assert quiet.returncode == 0 and "1 added" in quiet.stderr, quiet.stderr
    assert "UserWarning" not in quiet.stderr and "invalid specification" not in quiet.stderr
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg2")  # a fresh index, so the file is parsed again
    loud = subprocess.run([*cmd, "-v", "index", str(docs)], env=env, capture_output=True, text=True)
    assert loud.returncode == 0 and "invalid specification" in loud.stderr, loud.stderr


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
