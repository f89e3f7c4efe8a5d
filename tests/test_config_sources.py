"""Where settings come from: arguments > DOCSHELF_* variables > docshelf.toml > defaults, merged
table by table, read with the standard library (pydantic-settings cost every command ~57 ms)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from docshelf.config import Settings, load_settings
from docshelf.errors import ConfigError


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "docshelf.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_each_source_keeps_the_other_keys_of_a_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(
        tmp_path,
        '[embed]\nmodel = "use"\nthreads = 2\nbatch_size = 8\n'
        '[search]\nk = 5\nmode = "keyword"\n[chunk]\nmax_tokens = 64\n',
    )
    monkeypatch.setenv("DOCSHELF_EMBED__THREADS", "3")
    monkeypatch.setenv("DOCSHELF_SEARCH__K", "7")
    monkeypatch.setenv("DOCSHELF_WEB__DEPTH", "2")
    s = load_settings(config, embed={"batch_size": 4}, search={"fusion": "rrf"})
    assert (s.embed.model, s.embed.threads, s.embed.batch_size) == ("use", 3, 4)
    assert (s.search.k, s.search.mode, s.search.fusion) == (7, "keyword", "rrf")
    assert s.chunk.max_tokens == 64 and s.web.depth == 2
    assert s.embed.workers == 2 and s.search.rrf_k == 60  # named nowhere: the defaults


def test_a_plain_setting_takes_the_strongest_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(tmp_path, 'collection = "from-file"\n')
    assert load_settings(config).collection == "from-file"
    monkeypatch.setenv("DOCSHELF_COLLECTION", "from-env")
    assert load_settings(config).collection == "from-env"
    assert load_settings(config, collection="from-code").collection == "from-code"


def test_variable_names_and_table_keys_are_read_in_any_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("docshelf_embed__model", "hash")
    monkeypatch.setenv("Docshelf_Chunk__Max_Tokens", "100")
    monkeypatch.setenv("DOCSHELF_SERVER", '{"Port": 9000}')
    monkeypatch.setenv("docshelf_data_dir", str(tmp_path / "short"))
    s = load_settings(_config(tmp_path, "[Search]\nk = 3\n"))
    assert s.embed.model == "hash" and s.chunk.max_tokens == 100 and s.server.port == 9000
    assert s.store.data_dir == tmp_path / "short" and s.search.k == 3


def test_a_whole_table_as_json_under_its_own_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCSHELF_EMBED", '{"model": "use", "threads": 3, "someday": 1}')
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    s = load_settings()  # a key a newer version may know is left out, not refused
    assert (s.embed.model, s.embed.threads) == ("hash", 3)
    monkeypatch.setenv("DOCSHELF_EMBED", "null")  # JSON null: the table is not set
    assert load_settings().embed.model == "e5"
    monkeypatch.setenv("DOCSHELF_EMBED", "model=use")
    with pytest.raises(ConfigError, match=r"DOCSHELF_EMBED='model=use' is not valid JSON"):
        load_settings()


def test_a_bad_table_variable_says_what_the_table_takes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """DOCSHELF_STORE=/some/folder said "write the table as JSON, e.g. '{".log": ".txt"}'": the
    example of another table, and no word of the URL or of DOCSHELF_DATA_DIR, which it meant."""
    monkeypatch.setenv("DOCSHELF_STORE", str(tmp_path / "index"))
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert "DOCSHELF_STORE" in message and "postgresql://" in message and "DOCSHELF_DATA_DIR" in message
    assert ".log" not in message
    monkeypatch.delenv("DOCSHELF_STORE")
    monkeypatch.setenv("DOCSHELF_EMBED", "model=use")  # an example from the table's own settings
    with pytest.raises(ConfigError, match=r"""e\.g\. '\{"model": """) as info:
        load_settings()
    assert ".log" not in str(info.value)
    monkeypatch.delenv("DOCSHELF_EMBED")
    monkeypatch.setenv("DOCSHELF_SOURCES__EXTENSIONS", ".log=.txt")  # a table of names to names
    with pytest.raises(ConfigError, match=r"""e\.g\. '\{".log": ".txt"\}'"""):
        load_settings()


def test_a_list_is_json_or_comma_separated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCSHELF_SERVER__ALLOW_INGEST", f"{tmp_path / 'a'}, {tmp_path / 'b'},")
    assert load_settings().server.allow_ingest == [tmp_path / "a", tmp_path / "b"]
    monkeypatch.setenv("DOCSHELF_SERVER__ALLOW_INGEST", f'["{tmp_path / "a,b"}"]')  # a comma in a path
    assert load_settings().server.allow_ingest == [tmp_path / "a,b"]
    monkeypatch.setenv("DOCSHELF_ANALYZE__LANGUAGES", "french")
    assert load_settings().analyze.languages == ["french"]
    monkeypatch.setenv("DOCSHELF_ANALYZE__LANGUAGES", '"french"')  # JSON, but no list
    with pytest.raises(ConfigError, match=r"analyze\.languages \(from DOCSHELF_ANALYZE__LANGUAGES\)"):
        load_settings()


@pytest.mark.parametrize("name", ["DOCSHELF_CHUNK__MAX_TOKENS", "docshelf_chunk__max_tokens"])
def test_a_bad_number_names_its_variable(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "lots")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert f"chunk.max_tokens (from {name}): Input should be a valid integer" in str(caught.value)


def test_a_value_from_code_is_not_blamed_on_a_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCSHELF_CHUNK__MAX_TOKENS", "100")
    with pytest.raises(ConfigError) as caught:
        load_settings(chunk={"max_tokens": 2})
    assert "chunk.max_tokens: Input should be greater than or equal to 16" in str(caught.value)
    assert "DOCSHELF_" not in str(caught.value)


def test_the_postgres_url_shorthand_keeps_the_tables_other_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCSHELF_STORE", "postgresql://team@db.internal/docs")
    monkeypatch.setenv("DOCSHELF_DATA_DIR", str(tmp_path / "short"))
    s = load_settings(_config(tmp_path, "[store]\npool_size = 9\n"))
    assert s.store.url == "postgresql://team@db.internal/docs" and s.store.backend == "postgres"
    assert s.store.pool_size == 9 and s.store.data_dir == tmp_path / "short"


def test_settings_made_in_code_read_the_variables_but_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """shelf/writing.py compares a collection's settings with ``Settings()`` to say whether more than
    the defaults and the environment shaped them."""
    _config(tmp_path, "[chunk]\nmax_tokens = 64\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_EMBED__THREADS", "3")
    s = Settings(embed={"threads": 2})
    assert (s.embed.model, s.embed.threads, s.chunk.max_tokens) == ("hash", 2, 256)


def test_a_broken_file_is_reported_before_a_broken_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCSHELF_EMBED", "not json")
    config = _config(tmp_path, "[embed\nmodel = 'hash'\n")
    with pytest.raises(ConfigError, match=r"^cannot read config .*docshelf\.toml: Expected ']'"):
        load_settings(config)


def test_reading_settings_loads_no_asyncio() -> None:
    """pydantic-settings brought asyncio and its cloud providers into every command's start."""
    code = (
        "import sys, docshelf.config; "
        "print([m for m in ('asyncio', 'pydantic_settings') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
