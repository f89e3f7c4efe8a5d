"""grep through the Shelf, on both stores: exact places, once each, across chunk boundaries, with a
cursor, a time limit and patterns that cannot run away."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from docshelf.config import Settings
from docshelf.errors import ConfigError, DocshelfError
from docshelf.shelf import GrepRequest, Shelf

pytestmark = pytest.mark.usefixtures("backend")

FILLER = "Ordinary words fill this sentence so that the chunker has something to cut here."


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    lines = [FILLER] * 40
    lines[5] = "The proxy said ERR_SSL_PROTOCOL_ERROR twice, then err_ssl_protocol_error once."
    lines[30] = "Again: ERR_SSL_PROTOCOL_ERROR at the end."
    return _write(
        tmp_path / "notes",
        {
            "errors.md": "# Errors\n\n" + "\n".join(lines) + "\n",
            "other.md": "# Other\n\nNothing to see: ERR_SSL is not the whole name.\n",
            "greek.md": "# Greek\n\nΗ ΑΘΗΝΑ είναι πόλη. Straße und École.\n",
        },
    )


def test_literal_is_found_once_per_line_with_its_place(shelf: Shelf, notes: Path) -> None:
    with shelf:
        shelf.index([notes], "test")
        result = shelf.grep("ERR_SSL_PROTOCOL_ERROR")
        assert [(m.path, m.line) for m in result.matches] == [("errors.md", 8), ("errors.md", 33)]
        first = result.matches[0]
        assert first.citation == "errors.md:8" and first.heading_path == ("Errors",)
        assert [first.text[s:e] for s, e in first.spans] == [
            "ERR_SSL_PROTOCOL_ERROR",
            "err_ssl_protocol_error",
        ]
        assert [(c.path, c.lines) for c in result.counts] == [("errors.md", 2)]
        assert result.note is None and not result.scanned and result.cursor is None

        exact = shelf.grep("ERR_SSL_PROTOCOL_ERROR", ignore_case=False)
        assert [len(m.spans) for m in exact.matches] == [1, 1]


def test_case_folding_beyond_ascii_and_whole_words(shelf: Shelf, notes: Path) -> None:
    with shelf:
        shelf.index([notes], "test")
        assert [m.path for m in shelf.grep("η αθηνα").matches] == ["greek.md"]
        assert [m.path for m in shelf.grep("école").matches] == ["greek.md"]
        assert [m.path for m in shelf.grep("STRASSE").matches] == []  # as grep -i: ß is not "ss"
        assert {m.path for m in shelf.grep("ERR_SSL").matches} == {"errors.md", "other.md"}
        assert [m.path for m in shelf.grep("ERR_SSL", word=True).matches] == ["other.md"]


def test_a_phrase_across_a_chunk_boundary_is_found(shelf: Shelf, settings: Settings, tmp_path: Path) -> None:
    settings.chunk.overlap_tokens = 0  # chunks that meet end to end: no chunk holds both sides
    body = "\n\n".join(f"Opening{i} words. {FILLER} Closing{i} words." for i in range(12))
    root = _write(tmp_path / "docs", {"long.md": body + "\n"})
    with shelf:
        shelf.index([root], "test")
        chunks = shelf.read_passage(shelf.search("Opening5", k=1).hits[0].chunk_id, 9, 9).passages
        # a phrase that no single chunk holds: the end of one chunk and the start of the next
        a, b = chunks[0].chunk, chunks[1].chunk
        assert b.char_start >= a.char_end, "the test needs two chunks that do not overlap"
        phrase = a.text.split()[-2] + " " + a.text.split()[-1] + " " + b.text.split()[0]
        assert all(phrase not in p.chunk.text for p in chunks)
        found = shelf.grep(phrase)
        assert len(found.matches) == 1 and found.matches[0].line == a.line_end
        assert phrase.split()[-1] in found.matches[0].text.split("\n")[-1]


def test_overlapping_chunks_report_a_place_once(shelf: Shelf, tmp_path: Path) -> None:
    body = "\n".join(f"Sentence number {i} says beacon{i % 3}." for i in range(80))
    root = _write(tmp_path / "docs", {"one.md": body + "\n"})
    with shelf:
        shelf.index([root], "test")
        window = shelf.read_passage(shelf.search("beacon1", k=1).hits[0].chunk_id, 5, 5).passages
        assert any(x.chunk.char_end > y.chunk.char_start for x, y in itertools.pairwise(window))
        result = shelf.grep("beacon1")
        assert [m.line for m in result.matches] == [i + 1 for i in range(80) if i % 3 == 1]


def test_cursor_goes_on_where_the_cap_stopped(shelf: Shelf, tmp_path: Path) -> None:
    root = _write(tmp_path / "docs", {f"d{i}.md": f"# D{i}\n\nneedle one\nneedle two\n" for i in range(3)})
    with shelf:
        shelf.index([root], "test")
        seen: list[str] = []
        cursor = None
        for _ in range(5):
            page = shelf.grep("needle", max_results=4, cursor=cursor)
            seen += [m.citation for m in page.matches]
            cursor = page.cursor
            if cursor is None:
                break
            assert "max_results" in (page.note or "")
        assert seen == [f"d{i}.md:{n}" for i in range(3) for n in (3, 4)]
        files = shelf.grep("needle", output="files_with_matches", max_results=2)
        assert [c.path for c in files.counts] == ["d0.md", "d1.md"] and not files.matches and files.cursor
        rest = shelf.grep("needle", output="count", max_results=2, cursor=files.cursor)
        assert [(c.path, c.lines) for c in rest.counts] == [("d2.md", 2)] and rest.cursor is None


def test_context_filters_and_regex(shelf: Shelf, notes: Path) -> None:
    with shelf:
        shelf.index([notes], "test")
        m = shelf.grep("again:", context=1).matches[0]
        assert m.before == (FILLER,) and m.after == (FILLER,)
        assert shelf.grep("ERR_SSL", path_glob="other*").counts[0].path == "other.md"
        regex = shelf.grep(r"err_\w+_error\b", regex=True)
        assert regex.total_lines == 2 and not regex.scanned
        anchored = shelf.grep(r"^Again", regex=True)
        assert [m.line for m in anchored.matches] == [33]


def test_a_pattern_without_a_piece_scans_and_says_so(shelf: Shelf, notes: Path) -> None:
    with shelf:
        shelf.index([notes], "test")
        result = shelf.grep(r"[0-9]{2}", regex=True)
        assert result.scanned and "time_limit_s" in (result.note or "")
        limited = shelf.grep(r"\w+", regex=True, time_limit_s=1e-9)
        assert limited.timed_out and limited.cursor and "time limit" in (limited.note or "")


def test_catastrophic_and_refused_patterns(shelf: Shelf, tmp_path: Path) -> None:
    root = _write(tmp_path / "docs", {"a.txt": "a" * 50_000 + "!\n" + "a" * 30 + "\n"})
    with shelf:
        shelf.index([root], "test")
        result = shelf.grep("(a+)+$", regex=True)  # exponential for a backtracking engine
        assert [m.line for m in result.matches] == [2] and result.scanned and result.note
        with pytest.raises(DocshelfError, match="back-references"):
            shelf.grep(r"(a)\1", regex=True)
        with pytest.raises(DocshelfError, match="not a valid regular expression"):
            shelf.grep("(unclosed", regex=True)
        with pytest.raises(ConfigError, match="cursor"):
            shelf.grep("a", cursor="not-a-cursor")
        with pytest.raises(ConfigError, match="max_results"):
            GrepRequest("a", max_results=0)


def test_the_trigram_index_follows_changes_and_older_indexes_get_it(
    shelf: Shelf, settings: Settings, notes: Path, backend: str
) -> None:
    with shelf:
        shelf.index([notes], "test")
        (notes / "other.md").write_text("# Other\n\nNow it says QUOKKA_FAULT.\n", encoding="utf-8")
        (notes / "greek.md").unlink()
        shelf.index([notes], "test")
        assert [m.path for m in shelf.grep("quokka_fault").matches] == ["other.md"]
        assert not shelf.grep("ΑΘΗΝΑ").matches and not shelf.grep("ERR_SSL is not").matches
    if backend == "postgres":
        import psycopg

        with psycopg.connect(str(settings.store.url)) as pg:
            sql = "SELECT 1 FROM pg_indexes WHERE indexname = 'chunks_text_trgm'"
            assert pg.execute(sql).fetchone() is not None, "pg_trgm's index is missing"
        return
    import sqlite3

    from docshelf.store import EMBEDDED_DB

    with sqlite3.connect(settings.store.data_dir / EMBEDDED_DB) as conn:
        conn.execute("INSERT INTO chunk_grams(chunk_grams) VALUES('integrity-check')")  # raises if off
        # as an index made before grep: no trigram table, schema 4
        conn.executescript(
            "DROP TRIGGER chunk_grams_add; DROP TRIGGER chunk_grams_drop; DROP TABLE chunk_grams;"
            "PRAGMA user_version = 4;"
        )
    with Shelf(settings) as again:
        result = again.grep("QUOKKA_FAULT")
        assert [m.path for m in result.matches] == ["other.md"] and not result.scanned
