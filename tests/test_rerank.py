"""Cross-encoder reranking: the onnxruntime + tokenizers path on a tiny hand-built cross-encoder.

No cross-encoder's weights ship in a PyPI package we could find, so the ONNX graph here is built in
the test: its logit is the number of distinct query words that occur in the passage. That keeps every
part real (tokenizer pair encoding and truncation, padding, masks, onnxruntime, batching, ordering)
while the expected order can be worked out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from typer.testing import CliRunner

from docshelf.cli.main import app
from docshelf.config import RerankSettings, Settings
from docshelf.errors import ConfigError, EmbedError
from docshelf.search.rerank import (
    OnnxCrossEncoder,
    get_reranker,
    passage_text,
    rerank_hits,
)
from docshelf.search.searcher import Hit
from docshelf.shelf import Shelf

tokenizers = pytest.importorskip("tokenizers")

WORDS = [
    "[UNK]", "[CLS]", "[SEP]", "[PAD]", "the", "cat", "sat", "on", "mat", "dog", "ran", "far", "a",
    "red", "ball", "pager", "sev", "incident", "deploy", "rollback", "error", "budget", "page", "someone",
]  # fmt: skip


def _overlap_graph(vocab: int, two_class: bool = False) -> onnx.ModelProto:
    """logit = |{query words} ∩ {passage words}| (specials count once on both sides: a constant)."""
    i64, f32 = TensorProto.INT64, TensorProto.FLOAT
    nodes = [
        helper.make_node("Constant", [], ["depth"], value=helper.make_tensor("d", i64, [], [vocab])),
        helper.make_node("Constant", [], ["onoff"], value=helper.make_tensor("v", f32, [2], [0.0, 1.0])),
        helper.make_node("Constant", [], ["one"], value=helper.make_tensor("o", f32, [], [1.0])),
        helper.make_node("Constant", [], ["ax2"], value=helper.make_tensor("a2", i64, [1], [2])),
        helper.make_node("Constant", [], ["ax1"], value=helper.make_tensor("a1", i64, [1], [1])),
        helper.make_node("OneHot", ["input_ids", "depth", "onoff"], ["hot"], axis=-1),
        helper.make_node("Cast", ["attention_mask"], ["m"], to=f32),
        helper.make_node("Cast", ["token_type_ids"], ["t"], to=f32),
        helper.make_node("Mul", ["m", "t"], ["pm"]),
        helper.make_node("Sub", ["one", "t"], ["nt"]),
        helper.make_node("Mul", ["m", "nt"], ["qm"]),
        helper.make_node("Unsqueeze", ["qm", "ax2"], ["qm3"]),
        helper.make_node("Unsqueeze", ["pm", "ax2"], ["pm3"]),
        helper.make_node("Mul", ["hot", "qm3"], ["qh"]),
        helper.make_node("Mul", ["hot", "pm3"], ["ph"]),
        helper.make_node("ReduceMax", ["qh"], ["qp"], axes=[1], keepdims=0),
        helper.make_node("ReduceMax", ["ph"], ["pp"], axes=[1], keepdims=0),
        helper.make_node("Mul", ["qp", "pp"], ["both"]),
        helper.make_node("ReduceSum", ["both", "ax1"], ["score"], keepdims=1),
    ]
    if two_class:  # (B, 2) logits: "relevant" minus "irrelevant" must give the same order
        nodes += [
            helper.make_node("Neg", ["score"], ["neg"]),
            helper.make_node("Concat", ["neg", "score"], ["logits"], axis=1),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["score"], ["logits"]))
    inputs = [
        helper.make_tensor_value_info(n, i64, ["B", "L"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    out = helper.make_tensor_value_info("logits", f32, ["B", 2 if two_class else 1])
    graph = helper.make_graph(nodes, "overlap", inputs, [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _write_model(folder: Path, two_class: bool = False, nested: bool = False) -> Path:
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel

    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
    )
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    target = folder / "onnx" if nested else folder
    target.mkdir(exist_ok=True)
    onnx.save(_overlap_graph(len(WORDS), two_class), str(target / "model.onnx"))
    return folder


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    return _write_model(tmp_path / "xenc")


PASSAGES = [
    "a red ball",  # 0 shared words with the query below
    "the dog ran far on the mat",  # the, on, mat
    "the cat sat on the mat",  # the, cat, sat, on, mat
    "the cat",  # the, cat
    "dog",  # none
]
QUERY = "the cat sat on the mat"


def test_onnx_cross_encoder_scores_and_batches(model_dir: Path) -> None:
    one = OnnxCrossEncoder(model_dir, batch_size=1)
    scores = one.score(QUERY, PASSAGES)
    shared_sep = 1.0  # [SEP] ends both sides of every pair ([CLS] is on the query side only)
    assert [s - shared_sep for s in scores] == [0.0, 3.0, 5.0, 2.0, 0.0]
    # padded batches of mixed lengths must give the same scores, in input order
    assert OnnxCrossEncoder(model_dir, batch_size=3).score(QUERY, PASSAGES) == scores
    assert one.score(QUERY, []) == []
    assert one.name == "onnx:xenc"


def test_two_class_logits_and_nested_export(tmp_path: Path) -> None:
    folder = _write_model(tmp_path / "two", two_class=True, nested=True)
    scores = OnnxCrossEncoder(folder).score(QUERY, PASSAGES)
    assert list(np.argsort(scores, kind="stable")[::-1][:3]) == [2, 1, 3] and scores[0] == scores[4]


def test_truncation_keeps_the_query(model_dir: Path) -> None:
    # 10 tokens: [CLS] + 6 query words + [SEP] leave one passage word + [SEP]: the passage is cut
    short = OnnxCrossEncoder(model_dir, max_tokens=10)
    long_passage = "far far far far far the cat sat"
    assert short.score(QUERY, [long_passage])[0] == 1.0  # only the shared [SEP] is left
    assert OnnxCrossEncoder(model_dir).score(QUERY, [long_passage])[0] == 4.0  # the, cat, sat + [SEP]


def _hit(n: int, text: str) -> Hit:
    return Hit(
        chunk_id=f"c{n}", doc_id=f"d{n}", collection="t", path=f"p{n}.md", abs_path=f"/x/p{n}.md",
        title=None, heading_path=[], line_start=1, line_end=2, char_start=0, char_end=len(text),
        page=None, score=1.0 - n / 10, ranks={"keyword": n + 1}, snippet="", text=text,
    )  # fmt: skip


def test_rerank_hits_reorders_only_the_head(model_dir: Path) -> None:
    hits = [_hit(n, t) for n, t in enumerate(PASSAGES)]
    out = rerank_hits(QUERY, hits, OnnxCrossEncoder(model_dir), top_n=4)
    assert [h.chunk_id for h in out] == ["c2", "c1", "c3", "c0", "c4"]  # ties keep fused order
    assert [h.ranks["fused"] for h in out[:4]] == [3, 2, 4, 1]
    assert out[4] is hits[4] and "fused" not in out[4].ranks  # past top_n: untouched
    assert out[0].score == 6.0 and hits[2].score == pytest.approx(0.8)  # inputs not mutated


def test_passage_text_adds_heading_context() -> None:
    hit = _hit(0, "Page the on-call engineer.")
    hit.heading_path = ["Runbooks", "Sev-1"]
    assert passage_text(hit) == "Runbooks > Sev-1\nPage the on-call engineer."
    hit.text = "Runbooks > Sev-1 already here"
    assert passage_text(hit) == hit.text


def test_reranked_search_on_an_index(settings: Settings, indexed_shelf: Shelf, model_dir: Path) -> None:
    settings.rerank.model = f"onnx:{model_dir}"
    settings.rerank.top_n = 20
    reranker = get_reranker(settings.rerank)
    assert get_reranker(settings.rerank) is reranker  # loaded once
    plain = indexed_shelf.search("page someone for a sev incident", k=20, rerank=False)
    result = indexed_shelf.search("page someone for a sev incident", k=3, rerank=True)
    assert result.mode == "hybrid+rerank" and len(result.hits) == 3
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    top_plain = {h.chunk_id for h in plain.hits}
    assert {h.chunk_id for h in result.hits} <= top_plain
    expected = reranker.score("page someone for a sev incident", [passage_text(h) for h in plain.hits])
    assert scores[0] == max(expected)


def test_configuration_errors_say_what_to_set(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"set rerank\.model"):
        get_reranker(RerankSettings())
    with pytest.raises(ConfigError, match="unknown rerank model"):
        get_reranker(RerankSettings(model="bge:large"))
    with pytest.raises(ConfigError, match="does not exist"):
        get_reranker(RerankSettings(model=f"onnx:{tmp_path / 'nope'}"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"model\.onnx"):
        get_reranker(RerankSettings(model=f"onnx:{tmp_path / 'empty'}"))


def test_sentence_transformers_missing_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_st(name: str, *args: object, **kwargs: object) -> object:
        if name in ("torch", "sentence_transformers"):
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_st)
    with pytest.raises(EmbedError, match=r"docshelf\[st\]"):
        get_reranker(RerankSettings(model="st:cross-encoder/ms-marco-MiniLM-L-6-v2", threads=2))


def test_cli_search_rerank(settings: Settings, corpus: Path, model_dir: Path, tmp_path: Path) -> None:
    config = tmp_path / "docshelf.toml"
    config.write_text(
        f'collection = "test"\n[embed]\nmodel = "hash"\n[store]\ndata_dir = "{settings.store.data_dir}"\n'
        f'[rerank]\nmodel = "onnx:{model_dir}"\ntop_n = 10\n',
        encoding="utf-8",
    )
    runner = CliRunner()
    assert runner.invoke(app, ["index", str(corpus), "--config", str(config)]).exit_code == 0
    res = runner.invoke(
        app, ["search", "page someone sev", "--rerank", "--json", "-k", "2", "--config", str(config)]
    )
    assert res.exit_code == 0, res.output
    payload = json.loads(res.stdout)
    assert payload["mode"] == "hybrid+rerank" and len(payload["hits"]) == 2
    assert all("fused" in h["ranks"] for h in payload["hits"])
    plain = json.loads(
        runner.invoke(app, ["search", "page someone sev", "--json", "--config", str(config)]).stdout
    )
    assert plain["mode"] == "hybrid"
    bad = tmp_path / "bad.toml"
    bad.write_text(
        config.read_text(encoding="utf-8").replace(f"onnx:{model_dir}", "onnx:/nowhere"), encoding="utf-8"
    )
    res = runner.invoke(app, ["search", "sev", "--rerank", "--config", str(bad)])
    assert res.exit_code == 2 and "Traceback" not in res.output and "/nowhere" in res.output


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_search_rerank_argument(settings: Settings, indexed_shelf: Shelf, model_dir: Path) -> None:
    from mcp import Client

    from docshelf.server import create_server

    async with Client(create_server(settings, indexed_shelf)) as client:  # no rerank.model configured
        plain = await client.call_tool("search", {"query": "page someone sev"})
        assert plain.structured_content and plain.structured_content["mode"] == "hybrid"
        bad = await client.call_tool("search", {"query": "page someone sev", "rerank": True})
        assert bad.is_error and "rerank.model" in str(bad.content[0].text)  # type: ignore[union-attr]
    settings.rerank.model = f"onnx:{model_dir}"
    settings.rerank.top_n = 6
    async with Client(create_server(settings, indexed_shelf)) as client:
        query = {"query": "page someone sev", "k": 3, "rerank": True, "detail": "full"}  # ranks, score
        first = await client.call_tool("search", query)
        data = first.structured_content
        assert data and data["mode"] == "hybrid+rerank" and len(data["hits"]) == 3
        assert all("fused" in h["ranks"] for h in data["hits"])
        rest = await client.call_tool("search", {**query, "cursor": data["next_cursor"]})
        more = rest.structured_content
        assert more and len(more["hits"]) == 3
        ids = [h["chunk_id"] for h in data["hits"] + more["hits"]]
        assert len(set(ids)) == 6  # pages do not overlap
        scores = [h["score"] for h in data["hits"] + more["hits"]]
        assert scores == sorted(scores, reverse=True)  # one reranked order across both pages


def test_a_failing_model_is_one_error(model_dir: Path) -> None:
    # an export that wants float ids: onnxruntime refuses the int64 feed at run time
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["input_ids"], ["logits"], axes=[1], keepdims=1)],
        "bad", [helper.make_tensor_value_info("input_ids", f32, ["B", "L"])],
        [helper.make_tensor_value_info("logits", f32, ["B", 1])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 8
    onnx.save(model, str(model_dir / "model.onnx"))
    with pytest.raises(EmbedError, match="rerank model onnx:xenc failed"):
        OnnxCrossEncoder(model_dir).score(QUERY, PASSAGES)


def test_sentence_transformers_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The st: wiring, against stand-in modules (torch is not installed in CI)."""
    import sys
    import types

    calls: dict[str, object] = {}

    class FakeCrossEncoder:
        def __init__(self, name: str, device: str, max_length: int) -> None:
            calls.update(name=name, device=device, max_length=max_length)

        def predict(self, pairs: list[tuple[str, str]], batch_size: int) -> np.ndarray:
            calls["batch_size"] = batch_size
            return np.array([len(set(q.split()) & set(p.split())) for q, p in pairs], dtype=np.float32)

    torch = types.ModuleType("torch")
    torch.set_num_threads = lambda n: calls.update(threads=n)  # type: ignore[attr-defined]
    st = types.ModuleType("sentence_transformers")
    st.CrossEncoder = FakeCrossEncoder  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "sentence_transformers", st)
    reranker = get_reranker(RerankSettings(model="st:/models/xenc", threads=3, max_tokens=256, batch_size=4))
    assert reranker.name == "st:/models/xenc"
    assert reranker.score(QUERY, PASSAGES) == [0.0, 3.0, 5.0, 2.0, 0.0]
    assert calls == {
        "threads": 3,
        "name": "/models/xenc",
        "device": "cpu",
        "max_length": 256,
        "batch_size": 4,
    }
