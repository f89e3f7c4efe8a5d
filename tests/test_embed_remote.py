"""The OpenAI-compatible embeddings client against a local HTTP server (real HTTP)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import numpy as np
import pytest

from docshelf.config import EmbedSettings
from docshelf.embed import HashEmbedder, create_embedder
from docshelf.errors import ConfigError, EmbedError

_FAKE = HashEmbedder(16)


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        vectors = _FAKE.embed_documents(body["input"])
        data = [{"index": i, "embedding": v.tolist()} for i, v in reversed(list(enumerate(vectors)))]
        payload = json.dumps({"data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_openai_compatible_endpoint(endpoint: str, tmp_path: Any) -> None:
    settings = EmbedSettings(model="openai:nomic-embed-text", endpoint=endpoint, api_key="sk-test")
    emb = create_embedder(settings, tmp_path)
    assert emb.name == "openai:nomic-embed-text" and emb.dim == 16
    vecs = emb.embed_documents(["alpha beta", "gamma delta"])
    assert np.allclose(vecs, _FAKE.embed_documents(["alpha beta", "gamma delta"]), atol=1e-6)  # order kept
    last = _Handler.seen[-1]
    assert last["path"] == "/v1/embeddings" and last["auth"] == "Bearer sk-test"
    assert last["model"] == "nomic-embed-text"


def test_endpoint_problems_are_clear_errors(tmp_path: Any) -> None:
    with pytest.raises(EmbedError, match="needs an endpoint"):
        create_embedder(EmbedSettings(model="openai:x"), tmp_path)
    with pytest.raises(EmbedError, match="failed"):
        create_embedder(EmbedSettings(model="openai:x", endpoint="http://127.0.0.1:9/v1"), tmp_path)
    with pytest.raises(ConfigError, match="unknown embedding model"):
        create_embedder(EmbedSettings(model="word2vec"), tmp_path)
