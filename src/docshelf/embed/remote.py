"""Optional backends: sentence-transformers models and OpenAI-compatible endpoints."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from docshelf.embed.base import Vectors, normalize
from docshelf.errors import EmbedError

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = ["OpenAIEmbedder", "SentenceTransformerEmbedder"]


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by name or local path (extra: docshelf[st])."""

    def __init__(self, model: str, threads: int = 1, batch_size: int = 32) -> None:
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedError(
                "model st:... needs sentence-transformers; run: pip install 'docshelf[st]'"
            ) from exc
        torch.set_num_threads(threads)
        try:
            self._model: Any = SentenceTransformer(model, device="cpu")
        except Exception as exc:
            raise EmbedError(f"cannot load sentence-transformers model {model!r}: {exc}") from exc
        self.name = f"st:{model}"
        self.fusion_weight = 0.3  # not measured: a middle value; set search.semantic_weight
        self.dim = int(self._model.get_sentence_embedding_dimension())
        self.max_tokens = int(self._model.max_seq_length)
        self.batch_size = batch_size

    def count_tokens(self, text: str) -> int:
        return len(self._model.tokenizer(text)["input_ids"])

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        vecs = self._model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True)
        return normalize(np.asarray(vecs, dtype=np.float32).reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed_documents([text])[0]
        return vector


class OpenAIEmbedder:
    """An OpenAI-compatible /embeddings endpoint (OpenAI, Ollama, LM Studio, llama.cpp, vLLM).

    Sends chunk text to that endpoint: only used when the user configures it.
    """

    def __init__(self, model: str, endpoint: str | None, api_key: str | None, dim: int | None = None) -> None:
        if not endpoint:
            raise EmbedError(
                f"model openai:{model} needs an endpoint; set DOCSHELF_EMBED__ENDPOINT "
                "(e.g. http://127.0.0.1:11434/v1 for Ollama)"
            )
        if not api_key and urllib.parse.urlsplit(endpoint).hostname == "api.openai.com":
            # fail before sending anything: OpenAI answers 401 only after receiving the text
            raise EmbedError(
                f"model openai:{model} at api.openai.com needs an API key; set DOCSHELF_EMBED__API_KEY"
            )
        self.name = f"openai:{model}"
        self.fusion_weight = 0.3  # not measured: a middle value; set search.semantic_weight
        self._model = model
        self._endpoint = endpoint.rstrip("/") + "/embeddings"
        self._key = api_key
        self.max_tokens = 512
        self.dim = dim or len(self.embed_query("dimension probe"))

    def count_tokens(self, text: str) -> int:
        # No tokenizer for a remote model: a conservative estimate (4 chars a token, CJK 1).
        return sum(1 for ch in text if ord(ch) > 0x2E80) + len(text) // 4 + 1

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        body = json.dumps({"model": self._model, "input": list(texts)}).encode()
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        request = urllib.request.Request(self._endpoint, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=120) as resp:
                payload = json.loads(resp.read())
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise EmbedError(f"embedding endpoint {self._endpoint} failed: {exc}") from exc
        rows = sorted(payload.get("data", []), key=lambda d: d.get("index", 0))
        if len(rows) != len(texts):
            raise EmbedError(f"embedding endpoint returned {len(rows)} vectors for {len(texts)} texts")
        return normalize(np.asarray([r["embedding"] for r in rows], dtype=np.float32))

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed_documents([text])[0]
        return vector
