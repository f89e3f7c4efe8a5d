"""onnxruntime backend for e5-small: an ONNX graph built from the unpacked weights.

The graph (embedding sums + LayerNorm, 12 BERT layers, masked mean pooling)
is written next to the float32 ``.npy`` cache on first use; only the 4-bit
word-embedding rows are still gathered in numpy and fed as ``word``. A
dynamically int8-quantised copy (MatMul weights per channel) is made too and
kept only if it stays close to the float graph on a multilingual sample.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from docshelf.embed._e5_weights import Weights
from docshelf.embed.prepare import preparing

__all__ = ["OnnxEncoder", "build_graph", "load_encoder", "onnx_available"]

F32 = npt.NDArray[np.float32]
Ids = list[list[int]]
OPSET = 17
# vs the float graph on CHECK_TEXTS, or the int8 copy is not kept; 0.995 (not 0.99)
# because E5Embedder gives int8 vectors the float name
INT8_MIN_COSINE = 0.995
# FFN down-projections whose inputs (GELU outputs) have outlier channels: quantised as they are,
# they cost the int8 graph its accuracy (0.9916 cosine to float, against 0.9985 kept float32,
# which made them 12% of its time). They are quantised after SmoothQuant instead: x / s and W * s
# per input channel, s = max|x|^a / max|W|^(1-a), max|x| over CHECK_TEXTS.
SMOOTH = ("l0.fo", "l4.fo", "l5.fo")
SMOOTH_ALPHA = 0.8  # the share of the outliers moved into the weights (0.7-0.9 all kept 0.997+)
GRAPH = 2  # onnx.json's "graph": a cache from an older build (no "graph") is built again
FP32_FILE, INT8_FILE, META_FILE = "model.onnx", "model.int8.onnx", "onnx.json"
# Passages for the int8 acceptance check (scripts and lengths the model sees).
CHECK_TEXTS: tuple[str, ...] = (
    "Aspirin reduces the risk of heart attack in adults over 50, a randomised trial reports.",
    "Mitochondrial DNA mutations accumulate with age and impair oxidative phosphorylation "
    "in skeletal muscle; exercise partly restores respiratory capacity.",
    "Die Stadt Berlin ist die Hauptstadt Deutschlands und mit rund 3,7 Millionen Einwohnern "
    "die bevölkerungsreichste Stadt der Europäischen Union.",
    "黑豹队的防守只丢了 308分，在联赛中排名第六，同时也以 24 次拦截领先国家橄榄球联盟。",
    "서울은 대한민국의 수도이며 가장 큰 도시이다. 한강이 도시를 가로질러 흐른다.",
    "한국어 문장 임베딩은 검색 품질에 큰 영향을 미친다.",
    "東京は日本の首都であり、世界最大級の都市圏を形成している。",
    "Le vaccin a été administré à 12 000 volontaires âgés de 18 à 65 ans.",
    "Prices: $1,234.56 (approx. 3½%) — see §4.2, e-mail: a@b.org!!!",
)
# and run together: passages of a chunk's length, with every script in one (the smoothing's
# maxima come from these too)
CHECK_TEXTS += (" ".join(CHECK_TEXTS), "\n".join(reversed(CHECK_TEXTS * 2)))
log = logging.getLogger(__name__)


def _import(name: str) -> Any:
    """Import an optional dependency untyped (neither ships complete type information)."""
    return importlib.import_module(name)


def onnx_available() -> bool:
    """True when onnxruntime and onnx are installed. Found, not imported: ``onnx`` is needed only
    to build the graph once, and importing it (ml_dtypes) cost each process 0.3-0.9 s."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnx", "onnxruntime"))


def build_graph(w: Weights, smooth: Mapping[str, F32] | None = None) -> Any:
    """The encoder as an ``onnx.ModelProto``: (word, mask) -> pooled (batch, hidden); ``smooth``:
    per-channel scales for the inputs of some FFN down-projections (see SMOOTH), the same
    function."""
    onnx = _import("onnx")
    helper, numpy_helper, TensorProto = onnx.helper, onnx.numpy_helper, onnx.TensorProto

    h = w.header
    hidden, nh = h.hidden, h.heads
    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, arr: npt.ArrayLike, dtype: Any = np.float32) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(np.asarray(arr, dtype=dtype)), name))
        return name

    def node(op: str, ins: Sequence[str], out: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, list(ins), [out], name=out, domain=domain, **attrs))
        return out

    def layer_norm(x: str, wt: F32, b: F32, name: str) -> str:
        ins = [x, const(f"{name}.w", wt), const(f"{name}.b", b)]
        return node("LayerNormalization", ins, name, axis=-1, epsilon=float(h.eps))

    # Embeddings: word rows (fed) + positions 0..L-1 + token type 0, then LayerNorm.
    const("zero", [0], np.int64)
    const("one", [1], np.int64)
    seq = node("Slice", [node("Shape", ["word"], "word_shape"), "one", const("two", [2], np.int64)], "seq")
    pos_tab = const("pos_type", w.f32("pos") + w.f32("type"))
    pos = node("Slice", [pos_tab, "zero", seq, "zero"], "pos")
    x = layer_norm(node("Add", ["word", pos], "emb"), w.f32("eln_w"), w.f32("eln_b"), "emb_ln")
    maskf = node("Cast", ["mask"], "maskf", to=TensorProto.FLOAT)
    mask32 = node("Cast", ["mask"], "mask32", to=TensorProto.INT32)
    const("qkv_split", [hidden] * 3, np.int64)
    ms = "com.microsoft"  # onnxruntime's fused BERT kernels (and their int8 forms)
    for i in range(h.layers):
        p = f"l{i}"
        qkv = node("MatMul", [x, const(f"{p}.qkv.w", w.f32("qkv_w")[i])], f"{p}.qkv")
        qkv = node("Add", [qkv, const(f"{p}.qkv.b", w.f32("qkv_b")[i])], f"{p}.qkvb")
        nodes.append(helper.make_node("Split", [qkv, "qkv_split"], [f"{p}.q", f"{p}.k", f"{p}.v"], axis=2))
        ins = [f"{p}.q", f"{p}.k", f"{p}.v", "", mask32]
        # the cache pre-scales q by 1/sqrt(head_dim), hence scale=1
        ctx = node("MultiHeadAttention", ins, f"{p}.attn", domain=ms, num_heads=nh, scale=1.0)
        x = _skip_ln(node, const, ctx, x, w, i, "ao", "aln")
        mid = node("MatMul", [x, const(f"{p}.fi.w", w.f32("fi_w")[i])], f"{p}.fi")
        act = node("BiasGelu", [mid, const(f"{p}.fi.b", w.f32("fi_b")[i])], f"{p}.gelu", domain=ms)
        x = _skip_ln(node, const, act, x, w, i, "fo", "oln", (smooth or {}).get(f"{p}.fo"))
    m3 = node("Unsqueeze", [maskf, const("ax2", [2], np.int64)], "mask3")
    total = node("ReduceSum", [node("Mul", [x, m3], "masked"), "one"], "sum", keepdims=0)
    count = node("ReduceSum", [maskf, "one"], "count", keepdims=1)
    node("Div", [total, count], "pooled")
    graph = helper.make_graph(
        nodes,
        "e5_small",
        [
            helper.make_tensor_value_info("word", TensorProto.FLOAT, ["batch", "seq", hidden]),
            helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])],
        inits,
    )
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="docshelf")
    model.ir_version = 8  # loadable by onnxruntime >= 1.14
    onnx.checker.check_model(model)
    return model


def _skip_ln(
    node: Any, const: Any, x: str, skip: str, w: Weights, i: int, lin: str, ln: str, scale: F32 | None = None
) -> str:  # fmt: skip
    """LayerNorm(skip + x @ W + b), the residual block after attention and the FFN; ``scale``:
    x / scale @ (W * scale), per input channel."""
    weight = w.f32(f"{lin}_w")[i]
    if lin == "fo":  # the cache folds GELU's 0.5 into fo_w (numpy computes 2*GELU)
        weight = weight * np.float32(2.0)
    if scale is not None:
        x = node("Mul", [x, const(f"l{i}.{lin}.smooth", np.float32(1.0) / scale)], f"l{i}.{lin}.smoothed")
        weight = weight * scale[:, None]
    mm = node("MatMul", [x, const(f"l{i}.{lin}.w", weight)], f"l{i}.{lin}")
    # Add + LayerNormalization: onnxruntime's SkipLayerNormalization CPU kernel
    # is several times slower than the two (its fusion is disabled in the session).
    biased = node("Add", [mm, const(f"l{i}.{lin}.b", w.f32(f"{lin}_b")[i])], f"l{i}.{lin}.bias")
    res = node("Add", [biased, skip], f"l{i}.{lin}.res")
    ins = [res, const(f"l{i}.{ln}.w", w.f32(f"{ln}_w")[i]), const(f"l{i}.{ln}.b", w.f32(f"{ln}_b")[i])]
    out: str = node("LayerNormalization", ins, f"l{i}.{ln}", axis=-1, epsilon=w.header.eps)
    return out


class OnnxEncoder:
    """An onnxruntime session over the e5 graph; pooled, unnormalised vectors."""

    def __init__(self, path: Path, weights: Weights, threads: int) -> None:
        ort = _import("onnxruntime")

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        self.path = path
        self.weights = weights
        # int8 activations are quantised per batch: a row would depend on its batch-mates
        self.int8 = path.name == INT8_FILE
        self.float_why: str | None = None  # why not int8, where int8 was wanted
        self.session = ort.InferenceSession(
            str(path), opts, providers=["CPUExecutionProvider"], disabled_optimizers=["SkipLayerNormFusion"]
        )

    def __call__(self, seqs: Ids) -> F32:
        """Mean-pooled last hidden states for one batch (padded to its longest)."""
        return self.run(self.feed(seqs))

    def feed(self, seqs: Ids) -> dict[str, Any]:
        """The session's inputs for one batch: word rows (padded) and the mask."""
        lens = [len(s) for s in seqs]
        width = max(lens)
        mask = np.zeros((len(seqs), width), dtype=np.int64)
        for row, n in enumerate(lens):
            mask[row, :n] = 1
        ids = np.fromiter((t for s in seqs for t in s), dtype=np.int64, count=sum(lens))
        word = np.zeros((len(seqs), width, self.weights.header.hidden), dtype=np.float32)
        word[mask.astype(bool)] = self.weights.word_rows(ids)
        return {"word": word, "mask": mask}

    def run(self, feed: dict[str, Any]) -> F32:
        """The session alone on one batch's inputs."""
        out = self.session.run(["pooled"], feed)[0]
        pooled: F32 = np.asarray(out, dtype=np.float32)
        return pooled


def _save_atomic(write: Callable[[Path], object], target: Path) -> None:
    fd, name = tempfile.mkstemp(prefix=f".{target.name}-", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _cosines(a: F32, b: F32) -> F32:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    out: F32 = np.sum(a * b, axis=1)
    return out


class _OnnxAdvice(logging.Filter):
    """onnxruntime's quantiser advises on the root logger ("Please consider to run
    pre-processing before quantization"), which the terminal would show on a first run: it
    goes to docshelf's debug log instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "root" and "onnxruntime" in record.pathname.replace("\\", "/"):
            log.debug("onnxruntime: %s", record.getMessage())
            return False
        return True


def _smoothing(fp32: Path, weights: Weights, check: Ids) -> dict[str, F32]:
    """SmoothQuant's scales for the SMOOTH projections: each input channel's largest magnitude
    over ``check`` (one text a run, as the int8 graph runs) against its weight row's."""
    onnx = _import("onnx")
    model = onnx.load(str(fp32))
    inputs = {name: f"{name.split('.')[0]}.gelu" for name in SMOOTH}  # fo's input is the GELU
    for tensor in inputs.values():
        model.graph.output.append(onnx.helper.make_tensor_value_info(tensor, onnx.TensorProto.FLOAT, None))
    fd, path = tempfile.mkstemp(prefix=".stats-", suffix=".onnx", dir=fp32.parent)
    os.close(fd)
    try:
        onnx.save(model, path)
        encoder = OnnxEncoder(Path(path), weights, 1)
        peaks = {name: np.zeros(weights.header.ffn, dtype=np.float32) for name in SMOOTH}
        for ids in check:
            outs = encoder.session.run(list(inputs.values()), encoder.feed([ids]))
            for name, out in zip(SMOOTH, outs, strict=True):
                peaks[name] = np.maximum(peaks[name], np.abs(out).reshape(-1, out.shape[-1]).max(axis=0))
    finally:
        Path(path).unlink(missing_ok=True)
    scales = {}
    for name in SMOOTH:
        w_peak = np.abs(weights.f32("fo_w")[int(name.split(".")[0][1:])]).max(axis=1) * np.float32(2.0)
        scale = np.maximum(peaks[name], 1e-5) ** SMOOTH_ALPHA / np.maximum(w_peak, 1e-5) ** (1 - SMOOTH_ALPHA)
        scales[name] = scale.astype(np.float32)
    return scales


def _build(weights: Weights, target: Path, check: Ids) -> None:
    """Write the float graph, then try an int8 copy; onnx.json (last) records the outcome."""
    onnx = _import("onnx")
    model = build_graph(weights)
    _save_atomic(lambda p: onnx.save(model, str(p)), target / FP32_FILE)
    meta: dict[str, Any] = {"int8": False, "graph": GRAPH}
    try:
        quant = _import("onnxruntime.quantization")
        smoothed = build_graph(weights, _smoothing(target / FP32_FILE, weights, check))

        def quantize(p: Path) -> None:
            fd, name = tempfile.mkstemp(prefix=".smoothed-", suffix=".onnx", dir=target)
            os.close(fd)
            try:
                onnx.save(smoothed, name)
                quant.quantize_dynamic(
                    name, p, op_types_to_quantize=["MatMul"], per_channel=True,
                    weight_type=quant.QuantType.QInt8,
                    extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
                )  # fmt: skip
            finally:
                Path(name).unlink(missing_ok=True)

        root = logging.getLogger()
        demote = _OnnxAdvice()
        root.addFilter(demote)
        try:
            _save_atomic(quantize, target / INT8_FILE)
        finally:
            root.removeFilter(demote)
        ref = OnnxEncoder(target / FP32_FILE, weights, 1)(check)
        got = OnnxEncoder(target / INT8_FILE, weights, 1)(check)
        cos = float(_cosines(ref, got).min())
        meta = {"int8": cos >= INT8_MIN_COSINE, "int8_min_cosine": round(cos, 5), "graph": GRAPH}
        if not meta["int8"]:
            log.info("int8 e5 graph rejected (cosine %.4f vs float); using float32", cos)
            (target / INT8_FILE).unlink(missing_ok=True)
    except Exception as exc:  # quantisation is an optimisation only
        log.warning("int8 quantisation of the e5 graph failed (%s); using float32", exc)
    text = json.dumps(meta)
    _save_atomic(lambda p: p.write_text(text, encoding="utf-8"), target / META_FILE)


def _graph_of(target: Path) -> int | None:
    """The GRAPH the cached graphs in ``target`` were built as (None: none, or older than 2)."""
    try:
        meta = json.loads((target / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # a damaged onnx.json is built again, as a missing one
    graph = meta.get("graph") if isinstance(meta, dict) else None
    return graph if isinstance(graph, int) else None


def load_encoder(weights: Weights, cache_dir: Path, threads: int, int8: bool, check: Ids) -> OnnxEncoder:
    """The session over the cached graph (built on first use); float32 unless ``int8`` and accepted.

    ``check`` is the tokenised acceptance sample. Raises OSError when the cache
    cannot be written, ImportError / onnxruntime errors when the graph cannot run.
    """
    target = cache_dir / f"e5-small-q4-{weights.header.cache_key}"
    target.mkdir(parents=True, exist_ok=True)
    built = False
    if _graph_of(target) != GRAPH:
        with preparing(f"building the e5 onnxruntime graph in {cache_dir} (first use only)"):
            _build(weights, target, check)
        built = True
    while True:
        try:
            meta = json.loads((target / META_FILE).read_text(encoding="utf-8"))
            use_int8 = int8 and bool(meta.get("int8")) and (target / INT8_FILE).is_file()
            encoder = OnnxEncoder(target / (INT8_FILE if use_int8 else FP32_FILE), weights, threads)
            if int8 and not use_int8:
                cos = meta.get("int8_min_cosine")
                encoder.float_why = (
                    f"was rejected ({cos} cosine to the float graph, {INT8_MIN_COSINE} needed)"
                    if cos is not None
                    else "could not be made or kept (see the log)"
                )
            return encoder
        except Exception as exc:  # onnxruntime raises its own types for a damaged file
            if built:
                raise
            # a truncated or damaged cached graph (disk full, a killed build): build it again
            # once, rather than falling back to numpy on every run
            log.warning("the cached e5 graph in %s cannot be loaded (%s); rebuilding it", target, exc)
            with preparing(f"rebuilding the damaged e5 onnxruntime graph in {cache_dir}"):
                _build(weights, target, check)
            built = True
