"""Settings and environment at their edges: a one-line error or a warning, never a traceback.

Also: a damaged index says how to rebuild it (the corpus is the source of truth), and a damaged
cached e5 graph is rebuilt once instead of falling back to numpy on every run.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from docshelf.config import load_settings
from docshelf.errors import ConfigError, DocshelfError

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "corpus"


def _cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    base = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    base.update(DOCSHELF_EMBED__MODEL="hash", XDG_DATA_HOME=str(tmp_path / "xdg"), **env)
    return subprocess.run([sys.executable, "-m", "docshelf", *args], env=base, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)  # fmt: skip


def _one_line_error(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    for word in words:
        assert word in errors[0], errors[0]


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("DOCSHELF_ANALYZE__LANGUAGES", "[]", ("analyze.languages",)),
        ("DOCSHELF_ANALYZE__LANGUAGES", '["klingon"]', ("klingon", "english")),
        ("DOCSHELF_SOURCES__MAX_FILE_MB", "inf", ("sources.max_file_mb", "finite")),
        ("DOCSHELF_PARSE__TIMEOUT_S", "nan", ("parse.timeout_s",)),
        ("DOCSHELF_STORE__DATA_DIR", "", ("store.data_dir", "empty")),
        ("DOCSHELF_COLLECTION", "", ("collection",)),
        ("DOCSHELF_COLLECTION", "two\nlines", ("collection",)),
    ],
)
def test_bad_settings_are_config_errors(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, words: tuple[str, ...]
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    for word in words:
        assert word in str(caught.value)


def test_a_bad_setting_is_one_line_on_the_command_line(tmp_path: Path) -> None:
    proc = _cli(tmp_path, "index", str(SAMPLES), DOCSHELF_ANALYZE__LANGUAGES='["klingon"]')
    _one_line_error(proc, "klingon")
    assert not (tmp_path / "docshelf.db").exists()


def test_an_endless_lock_timeout_means_wait_as_long_as_it_takes(tmp_path: Path) -> None:
    from docshelf.embed import HashEmbedder
    from docshelf.shelf import Shelf

    settings = load_settings(watch={"lock_timeout_s": float("inf")})
    settings.store.data_dir = tmp_path / "data"
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        assert shelf.index([SAMPLES], "test").sync.added


def test_collection_names_are_checked_at_every_door(tmp_path: Path) -> None:
    from docshelf.embed import HashEmbedder
    from docshelf.shelf import Shelf

    settings = load_settings()
    settings.store.data_dir = tmp_path / "data"
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        for bad in ("", "  ", "a\nb", "tab\there", "x" * 300):
            with pytest.raises(DocshelfError, match="collection name"):
                shelf.index([SAMPLES], bad)
        assert shelf.collections() == []


def test_unknown_docshelf_variables_are_warned_about(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("DOCSHELF_STORE__DATADIR", "/tmp/x")
    monkeypatch.setenv("DOCSHELF_EMBED_MODEL", "use")
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")  # known: not warned about
    with caplog.at_level(logging.WARNING):
        load_settings()
    assert "DOCSHELF_STORE__DATADIR" in caplog.text and "DOCSHELF_STORE__DATA_DIR?" in caplog.text
    assert "DOCSHELF_EMBED_MODEL" in caplog.text and "ignoring DOCSHELF_EMBED__MODEL" not in caplog.text


def test_docshelf_data_dir_is_the_short_form_of_store_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("DOCSHELF_DATA_DIR", str(tmp_path / "short"))
    with caplog.at_level(logging.WARNING):
        assert load_settings().store.data_dir == tmp_path / "short"
    assert "DOCSHELF_DATA_DIR" not in caplog.text  # known, so not warned about
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / "long"))
    assert load_settings().store.data_dir == tmp_path / "long"  # the full name wins


def test_a_truncated_database_says_how_to_rebuild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from docshelf.cli import app

    data = tmp_path / "data"
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    runner = CliRunner()
    assert runner.invoke(app, ["index", str(SAMPLES), "--data-dir", str(data)]).exit_code == 0
    db = data / "docshelf.db"
    sqlite3.connect(db).execute("PRAGMA wal_checkpoint(TRUNCATE)").close()
    db.write_bytes(db.read_bytes()[:3000])
    for args in (("status",), ("search", "on-call"), ("index",)):
        result = runner.invoke(app, [*args, "--data-dir", str(data)])
        assert result.exit_code == 5 and "Traceback" not in result.output, result.output
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "docshelf index" in errors[0] and "rebuild" in errors[0], errors
        assert "permissions" not in errors[0]


def _tiny_graph(path: Path) -> None:
    """A valid ONNX graph with the encoder's inputs and output (pooled = mean of word)."""
    onnx = pytest.importorskip("onnx")
    helper, tp = onnx.helper, onnx.TensorProto
    graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["word"], ["pooled"], axes=[1], keepdims=0)], "tiny",
        [helper.make_tensor_value_info("word", tp.FLOAT, [None, None, 4]),
         helper.make_tensor_value_info("mask", tp.INT64, [None, None])],
        [helper.make_tensor_value_info("pooled", tp.FLOAT, [None, 4])],
    )  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))


def test_a_damaged_cached_int8_graph_is_rebuilt_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnxruntime")
    from docshelf.embed import _e5_onnx

    builds: list[Path] = []

    def build(weights: Any, target: Path, check: Any) -> None:  # the real one takes ~10 s
        builds.append(target)
        _tiny_graph(target / _e5_onnx.FP32_FILE)
        _tiny_graph(target / _e5_onnx.INT8_FILE)
        (target / _e5_onnx.META_FILE).write_text(json.dumps({"int8": True, "graph": _e5_onnx.GRAPH}))

    monkeypatch.setattr(_e5_onnx, "_build", build)
    weights = SimpleNamespace(
        header=SimpleNamespace(cache_key="test", hidden=4),
        word_rows=lambda ids: np.ones((len(ids), 4), dtype=np.float32),
    )
    first = _e5_onnx.load_encoder(weights, tmp_path, 1, True, [])  # type: ignore[arg-type]
    assert first.int8 and len(builds) == 1
    (builds[0] / _e5_onnx.INT8_FILE).write_bytes(b"\x08\x07truncated")  # a half-written cache file
    again = _e5_onnx.load_encoder(weights, tmp_path, 1, True, [])  # type: ignore[arg-type]
    assert again.int8 and len(builds) == 2  # rebuilt, still int8 (not numpy from now on)
    assert again([[1, 2, 3]]).shape == (1, 4)
    _e5_onnx.load_encoder(weights, tmp_path, 1, True, [])  # type: ignore[arg-type]
    assert len(builds) == 2


def test_settings_errors_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"analyze\.languages"):
        load_settings(analyze={"languages": ["klingon"]})
