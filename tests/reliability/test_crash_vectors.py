"""SIGKILL during the embedding phase of `docshelf index` (keyword first, vectors after): every file
stays keyword-searchable, the next `index` computes only the vectors still missing, and the index
ends equal to one built fresh.

The model is an OpenAI-compatible endpoint on 127.0.0.1 that holds one request open, so the kill
lands inside the second phase every time (not at a random point, as in test_crash.py).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from crashkit import _read_docs, cli_env, file_text

from docshelf.config import Settings, load_settings
from docshelf.embed import HashEmbedder
from docshelf.search.searcher import Searcher
from docshelf.store.base import Store
from docshelf.testing import Stages

DOCS = 30  # six paragraphs each, a paragraph or two a chunk: some 100 chunks, four a request
HOLD_AT = 12  # the request the model holds open while the indexer is killed
PROBE = "dimension probe"  # what the endpoint client sends once to learn the dimension


@dataclass
class _Model:
    """A fake embedding endpoint: the hash embedder's vectors, each request's texts recorded."""

    base: str = ""
    texts: list[list[str]] = field(default_factory=list)
    hold_at: int | None = None
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def embedded(self) -> int:
        return sum(len(t) for t in self.texts if t != [PROBE])


@pytest.fixture
def model() -> Iterator[_Model]:
    state = _Model()
    hashed = HashEmbedder(32)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            texts = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["input"]
            if texts != [PROBE] and state.hold_at is not None:
                requests = sum(1 for t in state.texts if t != [PROBE]) + 1
                if requests == state.hold_at:
                    state.reached.set()
                    state.release.wait(60)
                    return  # never answered: the client was killed meanwhile
            state.texts.append(texts)
            rows = [
                {"index": i, "embedding": v.tolist()} for i, v in enumerate(hashed.embed_documents(texts))
            ]
            body = json.dumps({"data": rows}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()


def _env(tmp: Path, model: _Model, url: str | None) -> dict[str, str]:
    extra = {"DOCSHELF_EMBED__MODEL": "openai:fake", "DOCSHELF_EMBED__ENDPOINT": model.base,
             # the endpoint's token estimate (4 characters a token): a paragraph or two a chunk
             "DOCSHELF_CHUNK__MAX_TOKENS": "40"}  # fmt: skip
    if url:
        extra["DOCSHELF_STORE__URL"] = url
    return cli_env(tmp, **extra)


def _index(data: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "docshelf", "index", *args, "--data-dir", str(data)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _settings(data: Path, url: str | None) -> Settings:
    settings = load_settings()
    settings.store.data_dir, settings.store.url = data, url
    return settings


def _snapshot(store: Store) -> tuple[dict[str, str], dict[str, tuple[Any, ...]], dict[str, bytes]]:
    """Documents, chunks and each chunk's vector, without what differs by when they were written."""
    docs = {d.path: d.content_hash for d in store.iter_documents()}
    chunks: dict[str, tuple[Any, ...]] = {}
    for d in store.iter_documents():
        for c in store.document_chunks(d.id):
            chunks[c.id] = (d.path, c.ordinal, c.text, c.embed_key, c.char_start, c.char_end, c.line_start)
    vectors = store.cached_vectors([c[3] for c in chunks.values()])
    return (
        docs,
        chunks,
        {cid: np.asarray(vectors[c[3]]).tobytes() for cid, c in chunks.items() if c[3] in vectors},
    )


def test_sigkill_in_the_embedding_phase_keeps_every_file_searchable_and_resumes(
    tmp_path: Path, model: _Model, backend: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("pg_database") if backend == "postgres" else None
    corpus, data, fresh = tmp_path / "corpus", tmp_path / "data", tmp_path / "fresh"
    corpus.mkdir()
    for d in range(DOCS):
        (corpus / f"f{d:03d}.txt").write_text(file_text(d, 1), "utf-8")
    env = _env(tmp_path, model, url)

    model.hold_at = HOLD_AT
    proc = _index(data, env, str(corpus))
    assert model.reached.wait(120), proc.communicate(timeout=60)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    model.hold_at = None
    model.release.set()
    sent = model.embedded()

    with Stages(_settings(data, url), embedder=HashEmbedder(32)) as rt:
        store = rt.store
        total = store.chunk_count()
        missing = store.missing_vectors()
        assert total >= DOCS * 2 and 0 < missing < total  # killed in the second phase
        _, chunks, vectors = _snapshot(store)
        keys = {chunks[cid][3] for cid in vectors}
        assert 0 < len(keys) <= sent  # every vector stored was one the killed run computed
        if url is None:
            assert len(_read_docs(data / "docshelf.db")) == DOCS  # each whole, its waiting chunks recorded
        searcher = Searcher(store, None, rt.analyzer, rt.settings.search)
        for d in range(DOCS):
            hits = searcher.search(f"m{d:03d}v1p05", k=1, mode="keyword").hits
            assert hits and hits[0].path == f"f{d:03d}.txt", d

    before = model.embedded()
    resumed = _index(data, env)
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert "Traceback" not in err and "8 unchanged" not in err
    waiting = {c[3] for cid, c in chunks.items() if cid not in vectors}
    assert model.embedded() - before == len(waiting)  # only what was missing, nothing twice

    assert _index(fresh, _env(tmp_path / "f", model, None), str(corpus)).wait(300) == 0
    with (
        Stages(_settings(data, url), embedder=HashEmbedder(32)) as resumed_rt,
        Stages(_settings(fresh, None), embedder=HashEmbedder(32)) as fresh_rt,
    ):
        assert resumed_rt.store.missing_vectors() == fresh_rt.store.missing_vectors() == 0
        got, want = _snapshot(resumed_rt.store), _snapshot(fresh_rt.store)
        assert got[0] == want[0] and got[1] == want[1]
        assert got[2] == want[2] and len(got[2]) == total
        if url is None:
            assert len(_read_docs(data / "docshelf.db", embedded=True)) == DOCS
