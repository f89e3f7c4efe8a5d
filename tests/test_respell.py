"""A query word the index lacks, tried in the index's other languages; typed with accents, it meets
pages written without them (accents.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from docshelf.analyze import Analyzer
from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.search.accents import accent_alternatives
from docshelf.search.respell import respelled
from docshelf.shelf import Shelf
from docshelf.store.base import SearchFilter
from docshelf.testing import Stages

A = Analyzer()


def _first_hits(
    settings: Settings, tmp_path: Path, files: dict[str, str], queries: Sequence[str]
) -> list[str]:
    pages = tmp_path / "pages"
    pages.mkdir()
    for name, text in files.items():
        (pages / name).write_text(text, encoding="utf-8")
    with Shelf(settings, embedder=HashEmbedder()) as shelf:
        shelf.index([pages], "test")
        found = []
        for q in queries:
            hits = shelf.search(q, mode="keyword", k=3).hits
            found.append(hits[0].path if hits else "")
        return found


@pytest.mark.usefixtures("backend")
def test_an_accented_query_finds_a_page_typed_without_accents(settings: Settings, tmp_path: Path) -> None:
    """`facturación` found nothing in notes that write `facturacion`, and `crème brûlée` matched
    only `crème`: the Spanish stem of the accented word (`factur`) is not the plain word's."""
    files = {
        "notas.md": "# Notas\n\nLa informacion de facturacion se actualiza cada mes en el portal.\n",
        "menu.md": "# Menu\n\nLe menu du cafe propose une creme brulee et un souffle au chocolat.\n",
        "other.md": "# Other\n\nThe portal lists the menu of the week and the chocolate desserts.\n",
    }
    queries = ["facturación", "información de facturación", "brûlée"]
    assert _first_hits(settings, tmp_path, files, queries) == ["notas.md", "notas.md", "menu.md"]


@pytest.mark.usefixtures("backend")
def test_a_word_of_the_index_fifth_language_finds_its_page(settings: Settings, tmp_path: Path) -> None:
    """A query too short to tell its language gets the stems of the index's three main languages
    only: `şifremi` and `ayarları` missed the one Turkish page of an index in five languages."""
    files = {
        "deploy.md": "# Deploy\n\nThe deployment guide explains how to roll back a release and restart "
        "the workers after an outage.\n",
        "handbuch.md": "# Handbuch\n\nDas Handbuch erklärt, wie man die Dienste neu startet und die "
        "Protokolle der letzten Woche liest.\n",
        "manual.md": "# Manual\n\nEl manual explica cómo reiniciar los servicios y leer los registros "
        "del sistema cada semana.\n",
        "guia.md": "# Guia\n\nO guia explica como reiniciar os serviços e ler os registros do sistema "
        "operacional toda semana.\n",
        "fatture.md": "# Amministrazione\n\nLe fatture vengono inviate ogni mese ai clienti e devono "
        "essere pagate entro trenta giorni dalla data della loro emissione.\n",
        "hesap.md": "# Hesap\n\nŞifrenizi sıfırlamak için ayarlar menüsündeki güvenlik bölümünü kullanın "
        "ve yöneticiye bildirin.\n",
    }
    queries = ["şifremi", "ayarları", "yöneticiler"]
    assert _first_hits(settings, tmp_path, files, queries) == ["hesap.md"] * 3


def test_found_words_keep_their_terms_and_small_indexes_cost_no_lookup() -> None:
    asked: list[list[str]] = []

    def known(terms: Sequence[str]) -> set[str]:
        asked.append(list(terms))
        return set(terms)

    main = ("english", "german")
    accented = A.tokens("crème brûlée")  # accents.py's, not a respelling
    assert respelled(A, "crème brûlée", accented, main, main, known) is accented and not asked
    found = A.tokens("reset şifremi")
    assert respelled(A, "reset şifremi", found, main, (*main, "turkish"), known) is found and len(asked) == 1


def test_a_missing_word_takes_its_stems_in_the_index_other_languages() -> None:
    query = "reset şifremi"
    tokens = A.tokens(query)
    main, every = ("english",), ("english", "turkish")
    out = respelled(A, query, tokens, main, every, lambda terms: {"res", "şifre"} & set(terms))
    assert [(t.term, t.start, t.end) for t in out] == [
        ("reset", 0, 5),
        ("res", 0, 5),
        ("şifre", 6, 13),
    ]  # at the typed word's span
    missing = respelled(A, query, tokens, main, every, lambda terms: set())
    assert missing == tokens  # nothing better known: the query's own terms


@pytest.mark.usefixtures("backend")
def test_an_accented_query_finds_pages_written_either_way(settings: Settings, tmp_path: Path) -> None:
    """Where some notes write `facturación` and others `facturacion`, the accented query found only
    the first kind (the index held the word, so nothing was respelled). The plain spelling's stems
    now stand in for the word: both pages come first (the exact spelling, the rarer terms, ahead),
    and the accented page, which holds both spellings' stems, gains nothing from that (a
    disjunction max, not a sum)."""
    pages = tmp_path / "pages"
    pages.mkdir()
    body = "se actualiza cada mes en el portal de clientes."
    other = "# Otro\n\nEl portal de clientes cambia de diseño cada mes.\n"
    (pages / "con.md").write_text(f"# Notas\n\nLa información de facturación {body}\n", encoding="utf-8")
    (pages / "sin.md").write_text(f"# Notas\n\nLa informacion de facturacion {body}\n", encoding="utf-8")
    (pages / "otro.md").write_text(other, encoding="utf-8")
    with Stages(settings, embedder=HashEmbedder()) as rt:
        rt.indexer().sync("test", [pages])
        for query in ("información de facturación", "facturación"):
            hits = rt.searcher().search(query, mode="keyword", k=3).hits
            assert [h.path for h in hits[:2]] == ["con.md", "sin.md"], query
            assert all("facturación" in h.matched for h in hits[:2]), query
            assert "**facturacion**" in hits[1].snippet, hits[1].snippet
            terms = rt.analyzer.terms(query)
            alternatives = accent_alternatives(rt.analyzer, query, rt.analyzer.tokens(query), ())
            assert alternatives and set(terms) >= set(alternatives), alternatives
            with_them = dict(rt.store.keyword_search(terms, 3, SearchFilter(), alternatives))
            alone = dict(rt.store.keyword_search(terms, 3, SearchFilter()))
            assert with_them[hits[0].chunk_id] == pytest.approx(alone[hits[0].chunk_id])
            assert with_them[hits[1].chunk_id] > alone.get(hits[1].chunk_id, 0.0) + 0.2
