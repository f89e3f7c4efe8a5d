"""Settings that name nothing, or a value that cannot work, are refused in one line that names the
setting (and the near one), rather than ignored: a misspelled `exclude` indexed private files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from docshelf.config import load_settings
from docshelf.errors import ConfigError


def _cli(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    base.update(DOCSHELF_EMBED__MODEL="hash", XDG_DATA_HOME=str(cwd / "xdg"), **env)
    return subprocess.run([sys.executable, "-m", "docshelf", *args], env=base, capture_output=True,
                          text=True, timeout=120, cwd=cwd)  # fmt: skip


def _error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The one `error:` line of a failed command (no traceback)."""
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "docshelf.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _refused(config: Path | None = None, **overrides: object) -> str:
    with pytest.raises(ConfigError) as caught:
        load_settings(config, **overrides)
    return str(caught.value)


def test_a_misspelled_key_in_a_section_is_an_error_not_an_indexed_secret(tmp_path: Path) -> None:
    priv = tmp_path / "priv"
    (priv / "secret").mkdir(parents=True)
    (priv / "secret" / "pay.md").write_text("# Pay\n\nsalary of the director\n", encoding="utf-8")
    (priv / "docshelf.toml").write_text('collection="priv"\n[sources]\nexlude=["secret/"]\n', "utf-8")
    line = _error_line(_cli(tmp_path, "index", "priv", "--data-dir", "data"))
    assert "sources.exlude" in line and "did you mean sources.exclude?" in line, line
    assert not (tmp_path / "data" / "docshelf.db").exists()


@pytest.mark.parametrize(
    ("toml", "named", "near"),
    [
        ('[sources]\nexlude = ["secret/"]\n', "sources.exlude", "sources.exclude"),
        ("[search]\nmdoe = 'keyword'\n", "search.mdoe", "search.mode"),
        ("[web]\nagent_private_host = true\n", "web.agent_private_host", "web.agent_private_hosts"),
        ("colection = 'x'\n", "colection", "collection"),
        ('exclude = ["secret/"]\n', "exclude", "sources.exclude"),  # outside its table
        ("[chunk]\ndata_dir = '/x'\n", "chunk.data_dir", "store.data_dir"),  # in the wrong table
        ("[sourcs]\nexclude = []\n", "sourcs", "sources"),
        ("[search.weights]\nkeyword = 1\n", "search.weights", None),  # a nested table
    ],
)
def test_unknown_keys_name_the_key_and_the_near_one(
    tmp_path: Path, toml: str, named: str, near: str | None
) -> None:
    text = _refused(_config(tmp_path, toml))
    assert f"{named}: no such setting" in text, text
    if near is not None:
        assert f"did you mean {near}?" in text, text
    assert "Extra inputs" not in text


def test_unknown_keys_from_the_python_api_are_refused_too() -> None:
    text = _refused(sources={"exlude": ["secret/"]})
    assert "sources.exlude: no such setting" in text and "sources.exclude" in text


def test_a_misspelled_variable_is_still_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    """A DOCSHELF_* variable may be meant for another version: warned about (envnames), not fatal."""
    monkeypatch.setenv("DOCSHELF_SOURCES__EXLUDE", '["secret/"]')
    assert load_settings().sources.exclude == []


def test_a_bad_variable_names_itself_and_the_accepted_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCSHELF_ANALYZE__LANGUAGES", "klingon")
    text = _refused()
    assert "DOCSHELF_ANALYZE__LANGUAGES" in text and "klingon" in text and "english" in text, text
    assert "None" not in text and "_EnvSource" not in text
    monkeypatch.setenv("DOCSHELF_ANALYZE__LANGUAGES", "english, german")  # a list without JSON
    assert load_settings().analyze.languages == ["english", "german"]
    monkeypatch.setenv("DOCSHELF_ANALYZE__LANGUAGES", '["french"]')
    assert load_settings().analyze.languages == ["french"]
    monkeypatch.delenv("DOCSHELF_ANALYZE__LANGUAGES")
    monkeypatch.setenv("DOCSHELF_SOURCES__EXTENSIONS", ".log=.txt")
    text = _refused()
    assert "DOCSHELF_SOURCES__EXTENSIONS" in text and "JSON" in text and "_EnvSource" not in text, text


def test_a_bad_variable_is_one_line_on_the_command_line(tmp_path: Path) -> None:
    line = _error_line(_cli(tmp_path, "status", DOCSHELF_ANALYZE__LANGUAGES="klingon"))
    assert "DOCSHELF_ANALYZE__LANGUAGES" in line and "known: " in line and "english" in line, line


def test_a_config_path_that_is_no_file_says_what_it_is(tmp_path: Path) -> None:
    folder = _error_line(_cli(tmp_path, "status", "--config", "/etc"))
    assert "/etc is a folder" in folder and "does not exist" not in folder, folder
    device = _error_line(_cli(tmp_path, "status", "--config", "/dev/zero"))
    assert "/dev/zero is not a regular file" in device and "does not exist" not in device, device
    missing = _error_line(_cli(tmp_path, "status", "--config", str(tmp_path / "nope.toml")))
    assert "does not exist" in missing


@pytest.mark.parametrize("pattern", ["[", "docs/[ab", "a\\", "[!"])
def test_an_invalid_glob_is_refused(tmp_path: Path, pattern: str) -> None:
    for key in ("include", "exclude"):
        text = _refused(sources={key: ["notes/**", pattern]})
        assert f"sources.{key}" in text and repr(pattern) in text and "glob" in text, text


def test_valid_globs_with_brackets_are_kept() -> None:
    globs = ["[ab]*.md", "\\[draft\\].md", "[]]x", "[!.]*", "docs/**"]
    assert load_settings(sources={"include": globs}).sources.include == globs


def test_an_overlap_as_long_as_a_chunk_is_refused(tmp_path: Path) -> None:
    text = _refused(_config(tmp_path, "[chunk]\noverlap_tokens = 100000\n"))
    assert "chunk.overlap_tokens" in text and "100000" in text and "chunk.max_tokens (256)" in text, text
    _refused(chunk={"max_tokens": 64, "overlap_tokens": 64})
    assert load_settings(chunk={"max_tokens": 64, "overlap_tokens": 63}).chunk.overlap_tokens == 63
    # the default overlap is not the user's choice: a small max_tokens alone stays fine
    assert load_settings(chunk={"max_tokens": 16}).chunk.max_tokens == 16


def test_an_overlap_as_long_as_a_chunk_is_one_line_on_the_command_line(tmp_path: Path) -> None:
    line = _error_line(_cli(tmp_path, "status", DOCSHELF_CHUNK__OVERLAP_TOKENS="100000"))
    assert "chunk.overlap_tokens" in line and "DOCSHELF_CHUNK__OVERLAP_TOKENS" in line, line


def test_recorded_settings_from_another_version_still_apply() -> None:
    """A collection records its settings; one a later version dropped must not make it unreadable."""
    from docshelf.shelf.settings import Recorded, apply

    old = Recorded({"sources": {"exclude": ["x/"], "follow_symlinks": True}}, "docshelf.toml", 0.0)
    assert apply(load_settings(), old).sources.exclude == ["x/"]
