"""Settings of the services around the index: web fetching, reranking, answers, watching, the server."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from docshelf.config_model import Field, Model

__all__ = [
    "ANTHROPIC_URL",
    "OPENAI_URL",
    "AnswerSettings",
    "RerankSettings",
    "Section",
    "ServerSettings",
    "WatchSettings",
    "WebSettings",
]


OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"


class Section(Model, allow_inf_nan=False):
    """A settings table; numbers must be finite (an inf size or timeout only ends in a crash), and a
    key that names no setting is an error (a misspelled ``exclude`` indexed private files)."""


class WebSettings(Section):
    """Web pages and Google Drive links given to `docshelf index URL`."""

    depth: int = Field(0, ge=0, le=10, description="follow same-site links this many clicks deep")
    max_pages: int = Field(50, ge=1, description="pages fetched per start URL")
    max_mb: float = Field(10.0, gt=0, description="a page or Drive file over this size is skipped")
    timeout_s: float = Field(20.0, gt=0, description="per request; a slower server is skipped")
    user_agent: str = "docshelf/0.1 (local document indexer)"
    agent_private_hosts: bool = Field(
        False, description="let an agent's ingest (MCP) fetch from loopback, private and link-local "
        "addresses; `docshelf index URL` always may",
    )  # fmt: skip


class RerankSettings(Section):
    """Cross-encoder reranking of the top fused hits (opt-in: docs/benchmarks.md has the cost)."""

    enabled: bool = Field(False, description="rerank every search; per call: --rerank / rerank=true")
    model: str = Field(
        "", description="st:<name or path> (sentence-transformers CrossEncoder, extra [st]) | "
        "onnx:<folder with model.onnx + tokenizer.json> (extra [rerank]); empty = none",
    )  # fmt: skip
    top_n: int = Field(30, ge=2, le=200, description="fused hits the cross-encoder re-scores")
    threads: int = Field(1, ge=1, description="onnxruntime/torch threads; one was fastest on 2 cores")
    max_tokens: int = Field(512, ge=16, le=4096, description="query + passage tokens per pair")
    batch_size: int = Field(8, ge=1)


class AnswerSettings(Section):
    """The LLM behind `docshelf ask` / ask_question: passages are sent to this endpoint."""

    provider: Literal["openai", "anthropic"] = Field(
        "openai", description="openai = any OpenAI-compatible /chat/completions (Ollama, vLLM, ...)"
    )
    model: str | None = Field(None, description="LLM model name; unset = no ask / ask_question")
    endpoint: str | None = Field(
        None, description="base URL, e.g. http://127.0.0.1:11434/v1; default: the provider's cloud API"
    )
    api_key: str | None = Field(None, description="else OPENAI_API_KEY / ANTHROPIC_API_KEY")
    passages: int = Field(6, ge=1, le=30, description="passages put in the prompt")
    max_passage_chars: int = Field(2000, ge=200)
    max_tokens: int = Field(800, ge=16, description="longest answer")
    temperature: float = Field(0.1, ge=0, le=2)
    timeout_s: float = Field(120.0, gt=0)
    rerank: bool | None = Field(None, description="rerank before answering; None = rerank.enabled")

    def base_url(self) -> str:
        """Where answers are computed: ``endpoint``, else the provider's cloud API."""
        return self.endpoint or (ANTHROPIC_URL if self.provider == "anthropic" else OPENAI_URL)


class WatchSettings(Section):
    """Live indexing (`docshelf watch`, `serve --watch`) and the single-writer lock."""

    debounce_ms: int = Field(
        500, ge=10, le=60_000, description="file events are grouped over at most this long before a sync"
    )
    rescan_s: float = Field(
        300.0, ge=0, description="a full rescan this often catches missed events (0 = never)"
    )
    lock_timeout_s: float = Field(
        30.0, ge=0, allow_inf_nan=True,
        description="how long a sync waits for another process that is indexing (inf: as long as it takes)",
    )  # fmt: skip


class ServerSettings(Section):
    """The MCP server (`docshelf serve`)."""

    read_only: bool = Field(False, description="leave out the write tools (ingest, forget, reindex)")
    allow_ingest: list[Path] = Field(
        default_factory=list,
        description="folders `ingest` may index (and below); empty = only inside roots already indexed",
    )
    host: str = Field("127.0.0.1", description="HTTP bind address; keep it on loopback")
    port: int = Field(8765, ge=1, le=65535)
    token: str | None = Field(None, description="HTTP bearer token; default: generated into the data dir")
    allowed_hosts: list[str] = Field(default_factory=list, description="extra Host values for HTTP")
    allowed_origins: list[str] = Field(default_factory=list, description="extra Origin values for HTTP")
    max_result_tokens: int = Field(
        8000, ge=1000, description="cap on one tool result (Claude Code warns at 10k, fails at 25k)"
    )
    page_size: int = Field(100, ge=1, le=1000, description="rows per list_documents page")
    model_wait_s: float = Field(
        5.0, ge=0, description="how long a search waits for the embedding model before keyword-only"
    )
    header_timeout_s: float = Field(
        10.0, gt=0, description="HTTP: a connection that has not sent its request head by then is closed"
    )
