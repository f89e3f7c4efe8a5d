"""`docshelf eval`: index a BEIR-layout set in a scratch index and score each search mode."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.search.evaluate import ModeScores
    from docshelf.search.searcher import Mode

__all__ = ["EvalRun", "run_eval"]

Tick = Callable[[str, int, int], None]


@dataclass
class EvalRun:
    name: str
    split: str
    queries: int
    model: str
    index_seconds: float
    chunks: int
    scores: list[ModeScores]


def run_eval(
    settings: Settings, folder: Path, split: str = "test",
    modes: Sequence[Mode] = ("keyword", "semantic", "hybrid"),
    workdir: Path | None = None, queries: Path | None = None,
    on_index: Tick | None = None, on_query: Tick | None = None,
) -> EvalRun:  # fmt: skip
    """Score ``modes`` on the set in ``folder``; ``workdir`` keeps the index (and its embeddings)."""
    from docshelf.errors import ConfigError, SourceError
    from docshelf.search.evaluate import evaluate, load_beir, write_corpus
    from docshelf.shelf.parts import Parts

    unknown = [m for m in modes if m not in ("keyword", "semantic", "hybrid")]
    if unknown:  # it scored a row of zeros
        raise ConfigError(f"mode must be keyword, semantic or hybrid, not {', '.join(map(repr, unknown))}")
    data = load_beir(folder, split, queries)
    if not data.queries:  # all zeros, exit 0: a measurement of nothing
        raise SourceError(
            f"no query of qrels/{split}.tsv is in {queries or folder / 'queries.jsonl'}: check that their "
            "ids match"
        )
    if not any(doc in data.corpus for judged in data.qrels.values() for doc in judged):
        raise SourceError(f"no document that qrels/{split}.tsv judges is in corpus.jsonl: check the ids")
    settings = settings.model_copy(deep=True)
    scratch = workdir or Path(tempfile.mkdtemp(prefix="docshelf-eval-"))
    settings.store.data_dir = scratch / "index"
    parts = Parts(settings)
    try:
        names = write_corpus(data, scratch / "corpus")
        started = time.perf_counter()
        report = parts.indexer("eval", on_index).sync("eval", [scratch / "corpus"])
        index_s = time.perf_counter() - started
        embedder, _ = parts.embedder(None)
        scores = evaluate(parts.searcher(embedder), data, names, "eval", modes, on_query)
        return EvalRun(
            data.name, split, len(data.queries), parts.model().name, index_s, report.chunks_written, scores
        )
    finally:
        parts.close()
        if workdir is None:
            shutil.rmtree(scratch, ignore_errors=True)
