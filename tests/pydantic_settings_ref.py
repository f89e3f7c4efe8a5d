"""The settings models as pydantic 2 declared them (docshelf before config_model.py), kept only
as the reference test_config_model.py compares the standard-library models with. Frozen: edit a
setting in config.py / config_services.py and here alike, or the differential test fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from docshelf.config import check_collection, default_cache_dir, default_data_dir
from docshelf.config_checks import glob_problem
from docshelf.errors import ConfigError


class Section(BaseModel):
    """A settings table; numbers must be finite (an inf size or timeout only ends in a crash), and a
    key that names no setting is an error (a misspelled ``exclude`` indexed private files)."""

    model_config = ConfigDict(allow_inf_nan=False, extra="forbid")


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


class SourceSettings(Section):
    """Which files under a root are indexed."""

    include: list[str] = Field(default_factory=list, description="gitignore-style globs; empty = all")
    exclude: list[str] = Field(default_factory=list, description="gitignore-style globs to skip")
    respect_gitignore: bool = True
    max_file_mb: float = Field(50.0, gt=0)
    extensions: dict[str, str] = Field(
        default_factory=dict,
        description="more files for built-in parsers, keyed by extension, file name or '' (no extension); "
        "an empty value leaves them out: {'.log' = '.txt', 'Jenkinsfile' = 'shell', '' = ''}",
    )

    @field_validator("include", "exclude")
    @classmethod
    def _globs(cls, v: list[str]) -> list[str]:
        for pattern in v:
            problem = glob_problem(pattern)
            if problem:
                raise ValueError(f"{pattern!r} is not a valid glob: {problem}")
        return v


class ChunkSettings(Section):
    """How documents are cut into chunks."""

    max_tokens: int = Field(256, ge=16, description="capped at the model's window")
    overlap_tokens: int = Field(32, ge=0)


class EmbedSettings(Section):
    """Which embedding model runs, and how."""

    # e5 by measurement: hybrid nDCG@10 0.71 vs 0.70 (scifact), 0.33 vs 0.32 (nfcorpus) with USE;
    # USE indexes several times faster (docs/benchmarks.md)
    model: str = Field("e5", description="e5 | use | hash | st:<name or path> | openai:<model>")
    threads: int = Field(1, ge=1, description="BLAS/ONNX intra-op threads per worker")
    workers: int = Field(
        2, ge=1, le=64,
        description="e5: texts embedded at once (one core each with threads = 1); 2 uses both cores "
        "of a 2-core machine (docs/benchmarks.md)",
    )  # fmt: skip
    batch_size: int = Field(32, ge=1)
    endpoint: str | None = Field(None, description="base URL for openai: models")
    cache_dir: Path = Field(
        default_factory=default_cache_dir, description="unpacked model files, shared by all indexes"
    )
    api_key: str | None = None


class AnalyzeSettings(Section):
    """Keyword analysis (BM25 side)."""

    languages: list[str] = Field(
        default_factory=lambda: ["english", "german"],
        description="Snowball stemmers for words whose language the stop-word vote cannot tell "
        "(short keyword queries); with detect = false, the only languages considered",
    )  # fmt: skip
    stopwords: bool = True
    extra_stopwords: list[str] = Field(default_factory=list)
    detect: bool = Field(
        True, description="pick each chunk's and query's language per script among every Snowball language"
    )
    decompound: bool = Field(
        True, description="split German compounds in two (Hintergrundaufgaben: hintergrund, aufgaben) "
        "where the word list is installed (pip install 'docshelf[german]')",
    )  # fmt: skip
    unaccented: bool = Field(
        True, description="index accented Latin words under their unaccented spelling's stems too, so a "
        "query typed without accents finds them (resume: résumé, informacion: información), and a query "
        "typed with accents finds pages written without them; not Vietnamese",
    )  # fmt: skip

    @field_validator("languages")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        import Stemmer  # PyStemmer: its list of Snowball stemmers

        known = sorted(Stemmer.algorithms())
        if not v:
            raise ValueError(f"name at least one language, e.g. ['english']; known: {', '.join(known)}")
        unknown = [lang for lang in v if lang.strip().lower() not in known]
        if unknown:
            raise ValueError(f"no stemmer for {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
        return v


class StoreSettings(Section):
    """Where the index lives."""

    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="the embedded index; with a PostgreSQL url only this machine's lock and token",
    )
    url: str | None = Field(
        None, description="postgresql://user:pass@host/db to use a shared PostgreSQL + pgvector store"
    )
    backend: Literal["sqlite", "postgres"] = "sqlite"
    read_only: bool = Field(
        False, description="open the index without writing anything (read commands and serve --read-only do)"
    )
    pool_size: int = Field(4, ge=1, le=100, description="PostgreSQL connections per process")
    ef_search: int = Field(200, ge=10, le=2000, description="pgvector HNSW search breadth")
    mmap_mb: int = Field(
        2048, ge=0, le=1_048_576,
        description="embedded store: MB of the database a search reads memory-mapped (0 = read() calls); "
        "100k chunks: resolving 240 dense hits 2.0 -> 1.4 ms",
    )  # fmt: skip

    @field_validator("data_dir", mode="before")
    @classmethod
    def _not_empty(cls, v: Any) -> Any:
        if isinstance(v, str) and not v.strip():  # Path("") is the working directory
            raise ValueError("must not be empty; name a folder, or leave it unset for the default")
        return v

    @field_validator("data_dir")
    @classmethod
    def _expand(cls, v: Path) -> Path:
        return v.expanduser()

    @model_validator(mode="after")
    def _backend_from_url(self) -> StoreSettings:
        if self.url:
            if not self.url.startswith(("postgresql://", "postgres://")):
                raise ValueError("store.url must be a postgresql:// DSN")
            self.backend = "postgres"
        elif self.backend == "postgres":
            raise ValueError("store.backend = 'postgres' needs store.url (a postgresql:// DSN)")
        return self


class SearchSettings(Section):
    """Search defaults."""

    mode: Literal["hybrid", "keyword", "semantic"] = "hybrid"
    k: int = Field(10, ge=1, le=1000)
    fusion: Literal["zscore", "convex", "rrf"] = "zscore"
    semantic_weight: float | None = Field(
        None, ge=0, le=1,
        description="dense share of the fused score; None = the value measured for the model "
        "(bench/tune_fusion.py, docs/benchmarks.md)",
    )  # fmt: skip
    semantic_weight_uncovered: float = Field(
        0.8, ge=0, le=1,
        description="semantic share when the query is in another language than the top dense hits, "
        "or none of its words occur in the index (scaled in as coverage falls below half)",
    )  # fmt: skip
    keyword_lead: bool = Field(
        True, description="z-score fusion: raise the keyword weight by how much more its top hit "
        "stands out than the dense one's (search/fusion.py keyword_lead)",
    )  # fmt: skip
    rrf_k: int = Field(60, ge=1)
    candidates: int = Field(200, ge=10, description="hits taken from each retriever before fusion")
    collapse_duplicates: bool = Field(
        True, description="a passage found word for word in several places (a copy of a file, a repeated "
        "paragraph) is one hit, its other places listed in the hit's also_in",
    )  # fmt: skip
    parallel_query: bool = Field(
        True, description="hybrid: embed the query on another thread while the keyword side searches",
    )  # fmt: skip
    dense_feedback: bool = Field(
        True, description="hybrid, a short statement: search the dense side again with the query's vector "
        "moved towards its first fused hits' (search/feedback.py)",
    )  # fmt: skip
    ann_threshold: int = Field(
        50_000, ge=0, description="from this many vectors on, search an HNSW index (exact below)"
    )
    ann_dtype: Literal["i8", "f16", "f32"] = Field(
        "i8", description="scalars in the HNSW index; hits are re-scored with the stored float32 vectors"
    )
    ann_ef_search: int = Field(256, ge=16, le=4096, description="HNSW search breadth (recall vs latency)")
    ann_connectivity: int = Field(
        32, ge=8, le=128, description="links per node in the HNSW graph; changing it rebuilds the file "
        "at the writer's next commit (16 stopped finding stored vectors at a million rows)",
    )  # fmt: skip
    ann_rebuild_rows: int = Field(
        20_000, ge=1,
        description="vectors written since the saved HNSW index are scanned exactly; from this many "
        "on, the writer folds them into the index at its next commit",
    )  # fmt: skip
    ann_threads: int = Field(2, ge=1, description="threads building the HNSW index (and ranking it exactly)")
    helper: Literal["auto", "on", "off"] = Field(
        "auto", description="CLI: `docshelf search` starts a per-user background process that keeps the "
        "index open and the model loaded, and later searches ask it (it only reads; exits when idle); "
        "auto: when run from a terminal",
    )  # fmt: skip
    helper_idle_s: float = Field(
        600.0, gt=0, description="CLI: the search helper exits after this many idle seconds"
    )


class ParseSettings(Section):
    """Limits and OCR for parsing one file (the size cap is ``sources.max_file_mb``)."""

    timeout_s: float = Field(300.0, gt=0, description="a file still parsing after this long is skipped")
    max_pages: int = Field(5000, ge=1, description="PDFs with more pages are skipped")
    max_unzipped_mb: float = Field(
        512.0, gt=0, description="zip-based files (Office, EPUB) unpacking to more are refused"
    )
    max_xml_part_mb: float = Field(
        32.0,
        gt=0,
        description="Word/PowerPoint files with a bigger XML part are refused, .xml files read as text "
        "(memory ~20x)",
    )
    isolate: bool = Field(
        True, description="parse in a worker process, stopped at timeout_s and max_memory_mb"
    )
    max_memory_mb: float = Field(
        2048.0, gt=0, description="memory a parse worker may use (RLIMIT_DATA) before the file is skipped"
    )
    workers: int = Field(
        2, ge=1, le=64,
        description="files a sync parses and chunks at once, each in its own worker process (isolate)",
    )  # fmt: skip
    ocr: bool = Field(True, description="OCR images and scanned PDF pages when Tesseract is installed")
    ocr_languages: list[str] = Field(
        default_factory=list,
        description="Tesseract languages, e.g. ['eng', 'chi_sim']; [] = per image, those of the script "
        "Tesseract's OSD detects (all installed when it cannot tell)",
    )


class Settings(BaseModel):
    """All settings; env vars look like DOCSHELF_EMBED__MODEL=e5."""

    # validate_default: pydantic-settings' own, so a default goes through the validators too
    model_config = ConfigDict(extra="forbid", validate_default=True)

    collection: str = "default"

    @field_validator("collection")
    @classmethod
    def _collection(cls, v: str) -> str:
        try:
            return check_collection(v)
        except ConfigError as exc:  # pydantic reports it with the setting's name
            raise ValueError(str(exc)) from None

    sources: SourceSettings = Field(default_factory=SourceSettings)
    chunk: ChunkSettings = Field(default_factory=ChunkSettings)
    embed: EmbedSettings = Field(default_factory=EmbedSettings)
    analyze: AnalyzeSettings = Field(default_factory=AnalyzeSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    watch: WatchSettings = Field(default_factory=WatchSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    parse: ParseSettings = Field(default_factory=ParseSettings)
    web: WebSettings = Field(default_factory=WebSettings)
