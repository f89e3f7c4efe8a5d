"""A query that reads as no language gets a note, not confident-looking hits in silence (issue 42,
item 4: `ꙮ ᚠᛇᚻ ⵣⵉⵔ` and random ideographs got 8-10 hits, confidence up to 0.39, no note)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.embed.e5 import E5Embedder
from docshelf.search.confidence import NEAREST_NOTE, UNREADABLE, UNREADABLE_NOTE
from docshelf.shelf import Shelf


class Reading(HashEmbedder):
    """Hash vectors; a query reads as language unless it holds a rune."""

    def plausibility(self, text: str) -> float | None:
        return -30.0 if any("\u16a0" <= ch <= "\u16f0" for ch in text) else -3.0


def test_a_query_the_model_cannot_read_says_so(settings: Settings, corpus: Path) -> None:
    with Shelf(settings, embedder=Reading()) as shelf:
        shelf.index([corpus])
        odd = shelf.search("ᚠᛇᚻ ᛒᛚᛟ", mode="hybrid")
        assert odd.hits and odd.note == UNREADABLE_NOTE
        # the same query but readable, and a real question, get no such note
        plain = shelf.search("wombat quokka", mode="hybrid")
        assert plain.note != UNREADABLE_NOTE
        real = shelf.search("how do we page someone for a sev-1", mode="hybrid")
        assert real.note is None and real.hits[0].matched


def test_a_matched_word_outweighs_the_models_doubt(settings: Settings, corpus: Path) -> None:
    """A hit holding a query word is evidence whatever the model thinks of the rest."""
    with Shelf(settings, embedder=Reading()) as shelf:
        shelf.index([corpus])
        result = shelf.search("deploy ᚠᛇᚻ", mode="hybrid")
        assert result.hits[0].matched and result.note not in (UNREADABLE_NOTE, NEAREST_NOTE)


@pytest.fixture(scope="module")
def e5(tmp_path_factory: pytest.TempPathFactory) -> E5Embedder:
    return E5Embedder(cache_dir=tmp_path_factory.mktemp("models"))


@pytest.mark.slow
def test_e5_reads_real_questions_in_many_scripts_and_not_random_ideographs(e5: E5Embedder) -> None:
    real = [
        "how do we page someone for a sev-1",
        "Urlaubstage beantragen",
        "数据备份策略是什么？",
        "온보딩 첫 주에는 무엇을 하나요",
        "как подать заявление на отпуск",
        "अवकाश के लिए आवेदन कैसे करें",
        "¿Cuántos días de vacaciones tengo?",
        "ヘルプデスクの電話番号",
        "b12 vitamin",
        "OAuth2 PKCE",
        "SEV-1",
    ]
    assert [q for q in real if (e5.plausibility(q) or 0.0) < UNREADABLE] == []
    rng = random.Random(5)

    def word() -> str:
        return "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(2, 6)))

    ideographs = [" ".join(word() for _ in range(3)) for _ in range(50)]
    odd = ["ꙮ ᚠᛇᚻ ⵣⵉⵔ", *ideographs]
    assert sum((e5.plausibility(q) or 0.0) < UNREADABLE for q in odd) >= 48
    assert e5.plausibility("1234 5678") is None  # no letters: it cannot say
