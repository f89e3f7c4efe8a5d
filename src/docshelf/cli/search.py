"""`docshelf search` and `docshelf eval`."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from docshelf.cli.common import (
    CollectionsOpt,
    ConfigOpt,
    DataDirOpt,
    FileTypesOpt,
    JsonOpt,
    PathGlobOpt,
    TagsOpt,
    handle_errors,
    load,
)
from docshelf.cli.direct import K_RANGE, MODES, run
from docshelf.cli.output import out, print_json, progress_bar

if TYPE_CHECKING:
    from docshelf.shelf import Mode, Shelf

__all__ = ["given_shelf", "register"]


def _hits(value: int) -> int:
    """The count, checked here: a range type would print "[1<=x<=1000]" in the help's widest column."""
    if not K_RANGE[0] <= value <= K_RANGE[1]:
        raise typer.BadParameter(f"{value} is not in the range {K_RANGE[0]}-{K_RANGE[1]}")
    return value


def search(
    query: Annotated[str, typer.Argument(help="what to look for, in any language; - reads it from stdin")],
    k: Annotated[
        int,
        typer.Option(
            "--k", "-k", "-n", "--limit", callback=_hits, metavar="N", help="number of hits (1-1000)"
        ),
    ] = 10,
    mode: Annotated[str | None, typer.Option(metavar="MODE", help="hybrid | keyword | semantic")] = None,
    collection: CollectionsOpt = None,
    path: PathGlobOpt = None,
    tag: TagsOpt = None,
    file_type: FileTypesOpt = None,
    include_superseded: Annotated[
        bool, typer.Option("--include-superseded", help="also show `lifecycle: superseded` documents")
    ] = False,
    rerank: Annotated[
        bool | None,
        typer.Option("--rerank/--no-rerank", help="cross-encoder rerank of the top hits (rerank.model)"),
    ] = None,
    ids: Annotated[bool, typer.Option("--ids", help="show chunk ids (for `docshelf show`)")] = False,
    no_helper: Annotated[
        bool, typer.Option("--no-helper", help="search in this process only; start no search helper")
    ] = False,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search the index: one block per hit with its citation, heading path and snippet.

    The first search starts a background helper (search.helper) that keeps the index open and the
    model loaded; later searches with the same settings ask it, so they skip both."""
    if mode not in MODES:
        raise typer.BadParameter("mode must be hybrid, keyword or semantic")
    values = {
        "query": query, "k": k, "mode": mode, "collection": collection, "path": path, "tag": tag,
        "file_type": file_type, "include_superseded": include_superseded, "rerank": rerank, "ids": ids,
        "no_helper": no_helper, "config": config, "data_dir": data_dir, "as_json": as_json,
    }  # fmt: skip
    code = run(values, _GIVEN.get())  # the search helper answers with the shelf it keeps open
    if code:
        raise typer.Exit(code)


_GIVEN: ContextVar[Shelf | None] = ContextVar("docshelf_search_shelf", default=None)


@contextmanager
def given_shelf(shelf: Shelf) -> Iterator[None]:
    """Searches in this context use ``shelf`` (the search helper's, open and loaded)."""
    token = _GIVEN.set(shelf)
    try:
        yield
    finally:
        _GIVEN.reset(token)


def eval_(
    folder: Annotated[
        Path, typer.Argument(help="a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels/)")
    ],
    split: Annotated[str, typer.Option(metavar="NAME", help="qrels split")] = "test",
    mode: Annotated[
        list[str] | None, typer.Option(metavar="MODE", help="modes to score (default all three)")
    ] = None,
    workdir: Annotated[
        Path | None, typer.Option(metavar="DIR", help="keep the eval index here to reuse embeddings")
    ] = None,
    queries: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="queries.jsonl with the same ids from elsewhere (another language)"
        ),
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Index a BEIR-layout set in a scratch index and report nDCG@10, recall@100, MRR@10, latency."""
    from rich.table import Table

    from docshelf.cli.logs import listen_for_preparation
    from docshelf.shelf import run_eval

    listen_for_preparation()
    modes: list[Mode] = [m for m in (mode or ["keyword", "semantic", "hybrid"])]  # type: ignore[misc]
    with progress_bar(sys.stderr.isatty()) as bar:
        itask = bar.add_task("indexing", total=None)
        qtask = bar.add_task("querying", total=None)
        done = [0]

        def tick(m: str, d: int, t: int) -> None:
            done[0] += 1
            bar.update(qtask, completed=done[0], total=t * len(modes))

        run = run_eval(
            load(config, None, None).settings, folder, split, modes, workdir, queries,
            on_index=lambda p, d, t: bar.update(itask, completed=d, total=t), on_query=tick,
        )  # fmt: skip
    rows = [s.__dict__ | {"set": run.name, "split": split, "model": run.model} for s in run.scores]
    if as_json:
        print_json({"index_seconds": round(run.index_seconds, 1), "chunks": run.chunks, "results": rows})
        return
    table = Table(
        title=f"{run.name} ({split}, {run.queries} queries, {run.model}); indexed in {run.index_seconds:.0f}s"
    )
    for col in ("mode", "nDCG@10", "recall@100", "MRR@10", "p50 ms", "p95 ms"):
        table.add_column(col, justify="right")
    for s in run.scores:
        table.add_row(
            s.mode,
            f"{s.ndcg10:.4f}",
            f"{s.recall100:.4f}",
            f"{s.mrr10:.4f}",
            f"{s.p50_ms:.1f}",
            f"{s.p95_ms:.1f}",
        )
    out.print(table)


def register(app: typer.Typer) -> None:
    """Add `search` and `eval` to the docshelf CLI."""
    app.command()(handle_errors(search))
    app.command(name="eval")(handle_errors(eval_))
