"""One window per hit: the snippet the CLI and agents read and the one the page shows are the
same passage, cut between words."""

from __future__ import annotations

import random
from pathlib import Path

from docshelf.analyze import Analyzer
from docshelf.search.snippets import make_snippet
from docshelf.shelf import Shelf
from docshelf.web.views import hit_row

_WORDS = [
    "a",
    "an",
    "the",
    "of",
    "pager",
    "escalates",
    "primary",
    "secondary",
    "engineer",
    "incident",
    "policy",
    "minutes",
    "rotation",
]


def _shown_words(snippet: str) -> list[str]:
    return snippet.replace("**", "").strip("…").split()


def test_a_prose_snippet_cut_from_a_long_passage_starts_and_ends_on_whole_words() -> None:
    """It began inside a word ("…xt here word58 ..."): a fragment reads as a typo or a different word."""
    analyzer = Analyzer()
    terms = set(analyzer.terms("wombat"))
    rng = random.Random(7)
    for n in range(40):
        filler = [f"{rng.choice(_WORDS)}{'x' * rng.randrange(12)}" for _ in range(120)]
        filler[rng.randrange(30, 90)] = "wombat"
        text = " ".join(filler)
        got = make_snippet(analyzer.tokens(text), text, terms).text
        assert "**wombat**" in got and got.startswith("…") and got.endswith("…"), got
        assert set(_shown_words(got)) <= set(filler), (n, got)


def test_a_snippet_of_text_without_spaces_stays_its_width() -> None:
    analyzer = Analyzer()
    text = "公司的数据备份策略每天执行" * 60
    got = make_snippet(analyzer.tokens(text), text, set(analyzer.terms("数据备份")), width=120).text
    assert "**数据备份**" in got and len(got.replace("**", "")) <= 120 + 2


def test_the_page_shows_the_passage_the_shelf_chose_for_a_hit(indexed_shelf: Shelf) -> None:
    """The page chose a window of its own (wider, from the passage's first line where the CLI
    leaves out the heading line the hit carries): two code paths showing two different texts."""
    compared = 0
    for query in (
        "pager escalation",
        "roll back a deployment",
        "error budget",
        "Urlaub",
        "headings",
        "backup",
        "온보딩",
    ):
        for hit in indexed_shelf.search(query, mode="keyword", k=10).hits:
            page = hit_row(hit)["snippet"]
            shown = "".join(piece for piece, _ in page["parts"])
            assert shown.replace("**", "").split() == _shown_words(hit.snippet), (query, hit.citation)
            assert page["cut_before"] == hit.snippet.startswith("…")
            assert page["cut_after"] == hit.snippet.endswith("…")
            compared += 1
    assert compared >= 10


def test_an_ellipsis_of_the_passage_itself_is_no_cut(shelf: Shelf, tmp_path: Path) -> None:
    """The page took a snippet beginning with "…" for a cut: a passage that begins "…continued"
    (or ends "and so on…") showed "… …continued", text left out where none was."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("…continued from the wombat report, and so on…\n", "utf-8")
    long = " ".join(f"filler{i}" for i in range(200))
    (docs / "long.md").write_text(f"{long} the numbat census {long}\n", "utf-8")
    with shelf:
        shelf.index([docs], "test")
        short = shelf.search("wombat", mode="keyword").hits[0]
        cut = shelf.search("numbat", mode="keyword").hits[0]
    assert short.snippet.startswith("…") and short.snippet.endswith("…")  # the passage's own
    row = hit_row(short)["snippet"]
    assert (row["cut_before"], row["cut_after"]) == (False, False)
    assert "".join(p for p, _ in row["parts"]).startswith("…continued")
    row = hit_row(cut)["snippet"]
    assert (row["cut_before"], row["cut_after"]) == (True, True)  # cut from a long passage
    assert short.as_dict(with_text=True)["snippet_cut"] == (False, False)  # beside snippet_window
