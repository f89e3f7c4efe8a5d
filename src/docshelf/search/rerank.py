"""Cross-encoder reranking of the top fused hits.

Two backends, both loaded on first use and kept per process:

- ``onnx:<folder>``: an ONNX export of a cross-encoder (``model.onnx`` or ``onnx/model.onnx``,
  quantized variants too) with its ``tokenizer.json``, run with onnxruntime (a base dependency) and
  the light ``tokenizers`` package (extra ``[rerank]``). No torch, no download: the folder must exist.
- ``st:<name or path>``: a sentence-transformers ``CrossEncoder`` (extra ``[st]``; a name is fetched
  from the Hugging Face hub by sentence-transformers itself, a path works offline).

Reranking re-scores the first ``top_n`` hits of a search and orders them by the cross-encoder's
score; hits past ``top_n`` keep their fused order and score after them.
"""

from __future__ import annotations

import dataclasses
import importlib
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from docshelf.config import RerankSettings
from docshelf.errors import ConfigError, EmbedError
from docshelf.search.confidence import VectorCounts, in_order

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

if TYPE_CHECKING:
    from docshelf.search.searcher import Hit, Mode, Searcher, SearchResult
    from docshelf.store.base import SearchFilter

__all__ = [
    "OnnxCrossEncoder",
    "Reranker",
    "SentenceTransformersCrossEncoder",
    "get_reranker",
    "passage_text",
    "rerank_hits",
    "reranked_search",
]

_MODEL_FILES = (
    "model.onnx", "onnx/model.onnx", "model_quantized.onnx", "onnx/model_quantized.onnx",
    "model_int8.onnx", "onnx/model_int8.onnx",
)  # fmt: skip
_cache: dict[tuple[str, int, int, int], Reranker] = {}
_cache_lock = threading.Lock()


class Reranker(Protocol):
    """Scores (query, passage) pairs; higher is more relevant."""

    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


def _logits_to_scores(logits: Any) -> list[float]:
    """One relevance score per pair from (B,), (B, 1) or (B, 2) logits (class 1 = relevant)."""
    arr = np.asarray(logits, dtype=np.float32)
    if arr.ndim == 2 and arr.shape[1] == 2:
        return [float(x) for x in arr[:, 1] - arr[:, 0]]  # log-odds of "relevant"
    return [float(x) for x in arr.reshape(arr.shape[0], -1)[:, 0]]


class OnnxCrossEncoder:
    """A cross-encoder exported to ONNX (BERT/MiniLM/XLM-R style inputs), run with onnxruntime."""

    def __init__(self, path: Path, threads: int = 1, max_tokens: int = 512, batch_size: int = 8) -> None:
        model_file, tokenizer_file = _find_files(path)
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedError(
                "rerank model onnx:... needs tokenizers; run: pip install 'docshelf[rerank]'"
            ) from exc
        ort: Any = importlib.import_module("onnxruntime")  # untyped

        try:
            self._tok = Tokenizer.from_file(str(tokenizer_file))
            options = ort.SessionOptions()
            # explicit: onnxruntime would otherwise take every core, which the server shares
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            self._session = ort.InferenceSession(
                str(model_file), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime and tokenizers raise many types
            raise EmbedError(f"cannot load rerank model {path}: {exc}") from exc
        self._tok.no_padding()
        self._tok.enable_truncation(max_length=max_tokens, strategy="only_second")
        self._inputs = {i.name for i in self._session.get_inputs()}
        if "input_ids" not in self._inputs:
            raise EmbedError(f"{model_file} has no input_ids input: not a BERT-style cross-encoder export")
        pads = [self._tok.token_to_id(t) for t in ("[PAD]", "<pad>")]
        self._pad = next((p for p in pads if p is not None), 0)  # masked out either way
        self.name = f"onnx:{path.name}"
        self.batch_size = batch_size

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage, the pair truncated on the passage's side (the query is short
        and all of it matters), in batches of similar lengths."""
        if not passages:
            return []
        encs = self._tok.encode_batch([(query, p) for p in passages])
        out = [0.0] * len(encs)
        # similar lengths share a batch, so little compute goes to padding
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(len(encs[i].ids) for i in batch)
            ids = np.full((len(batch), width), self._pad, dtype=np.int64)
            types = np.zeros_like(ids)
            mask = np.zeros_like(ids)
            for row, i in enumerate(batch):
                e = encs[i]
                n = len(e.ids)
                ids[row, :n], types[row, :n], mask[row, :n] = e.ids, e.type_ids, 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            try:
                logits = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
            except Exception as exc:  # onnxruntime's own error types
                raise EmbedError(f"rerank model {self.name} failed: {exc}") from exc
            for i, s in zip(batch, _logits_to_scores(logits), strict=True):
                out[i] = s
        return out


class SentenceTransformersCrossEncoder:
    """A sentence-transformers CrossEncoder by name or local path (extra: docshelf[st])."""

    def __init__(self, model: str, threads: int = 1, max_tokens: int = 512, batch_size: int = 8) -> None:
        try:
            import torch
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise EmbedError(
                "rerank model st:... needs sentence-transformers; run: pip install 'docshelf[st]'"
            ) from exc
        torch.set_num_threads(threads)
        try:
            self._model: Any = CrossEncoder(model, device="cpu", max_length=max_tokens)
        except Exception as exc:
            raise EmbedError(f"cannot load cross-encoder {model!r}: {exc}") from exc
        self.name = f"st:{model}"
        self.batch_size = batch_size

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage, from the model's logits as the ONNX path reads them."""
        if not passages:
            return []
        raw = self._model.predict([(query, p) for p in passages], batch_size=self.batch_size)
        return _logits_to_scores(raw)


def _find_files(path: Path) -> tuple[Path, Path]:
    """(model file, tokenizer.json) of an export: the .onnx file given, or the first of
    _MODEL_FILES in the folder (exporters put it at the top or under onnx/, quantized or not);
    tokenizer.json beside the model's folder or one above it."""
    path = path.expanduser()
    if path.is_file() and path.suffix == ".onnx":
        folder, candidates = path.parent, [path]
    elif path.is_dir():
        folder, candidates = path, [path / name for name in _MODEL_FILES]
    else:
        raise ConfigError(f"rerank model folder {path} does not exist; set rerank.model to onnx:<folder>")
    model = next((c for c in candidates if c.is_file()), None)
    tokenizer = next(
        (t for t in (folder / "tokenizer.json", folder.parent / "tokenizer.json") if t.is_file()), None
    )
    if model is None or tokenizer is None:
        raise ConfigError(f"{path} needs model.onnx (or onnx/model.onnx) and tokenizer.json")
    return model, tokenizer


def get_reranker(settings: RerankSettings) -> Reranker:
    """The configured cross-encoder, loaded once per process (ConfigError/EmbedError say what to fix)."""
    spec = settings.model.strip()
    if not spec:
        raise ConfigError(
            "reranking needs a cross-encoder: set rerank.model (DOCSHELF_RERANK__MODEL) to "
            "onnx:<folder> or st:<name or path>"
        )
    key = (spec, settings.threads, settings.max_tokens, settings.batch_size)
    with _cache_lock:  # one load even when two requests ask at once
        if key not in _cache:
            kind, _, target = spec.partition(":")
            if not target or kind not in ("onnx", "st"):
                raise ConfigError(f"unknown rerank model {spec!r}: use onnx:<folder> or st:<name or path>")
            args = (settings.threads, settings.max_tokens, settings.batch_size)
            reranker: Reranker = (
                OnnxCrossEncoder(Path(target), *args) if kind == "onnx"
                else SentenceTransformersCrossEncoder(target, *args)
            )  # fmt: skip
            _cache[key] = reranker
        return _cache[key]


def passage_text(hit: Hit) -> str:
    """What the cross-encoder reads: the heading path (or title) for context, then the chunk."""
    head = " > ".join(hit.heading_path) or (hit.title or "")
    return f"{head}\n{hit.text}" if head and head not in hit.text[: len(head) + 8] else hit.text


def rerank_hits(query: str, hits: Sequence[Hit], reranker: Reranker, top_n: int) -> list[Hit]:
    """The first ``top_n`` hits ordered by cross-encoder score (their ``score`` becomes it; ``ranks``
    gains ``fused``, the position before reranking); the rest follow unchanged."""
    head = list(hits[:top_n])
    scores = reranker.score(query, [passage_text(h) for h in head])
    order = sorted(range(len(head)), key=lambda i: -scores[i])  # stable: ties keep fused order
    reranked = [
        dataclasses.replace(head[i], score=scores[i], ranks={**head[i].ranks, "fused": i + 1}) for i in order
    ]
    out = reranked + list(hits[top_n:])
    # down the new order too, no hit is more trusted than one above it (search/confidence.py)
    capped = in_order([h.confidence for h in out])
    return [
        h if h.confidence == c else dataclasses.replace(h, confidence=c)
        for h, c in zip(out, capped, strict=True)
    ]


def reranked_search(
    searcher: Searcher, reranker: Reranker, query: str, k: int, top_n: int,
    mode: Mode | None = None, flt: SearchFilter | None = None, snippets: bool = True,
    counted: VectorCounts | None = None,
) -> SearchResult:  # fmt: skip
    """``searcher.search`` for max(k, top_n) hits, the first ``top_n`` reranked, cut to ``k``."""
    result = searcher.search(query, k=max(k, top_n), mode=mode, flt=flt, snippets=snippets, counted=counted)
    started = time.perf_counter()
    result.hits = rerank_hits(query, result.hits, reranker, top_n)[:k]
    result.took_ms += (time.perf_counter() - started) * 1000
    if result.hits:
        result.mode = f"{result.mode}+rerank"
    return result
