"""The `docshelf` command line.

The heavy parts (runtime, store, numpy, tantivy, rich tables, pydantic settings) are imported
inside the commands that use them, so `docshelf serve` and `--help` start quickly.
"""

from __future__ import annotations

import functools
import logging
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.markup import escape

from docshelf.cli.output import err, out, print_json, progress_bar
from docshelf.errors import DocshelfError, NotFoundError, StoreError

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.search.searcher import Mode

__all__ = ["app", "main"]

app = typer.Typer(
    name="docshelf",
    help="Local-first document search for LLM agents: index folders, search them, serve them over MCP.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

F = TypeVar("F", bound=Callable[..., Any])

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="docshelf.toml to read")]
DataDirOpt = Annotated[Path | None, typer.Option("--data-dir", help="where the index lives")]
CollectionOpt = Annotated[str | None, typer.Option("--collection", "-c", help="collection name")]
JsonOpt = Annotated[bool, typer.Option("--json", help="machine-readable JSON on stdout")]

STRICT_EXIT = 9  # index --strict: some files were skipped


def _handle_errors(fn: F) -> F:
    """Turn DocshelfError into a one-line message and its exit code, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DocshelfError as exc:
            err.print(f"[red]error:[/red] {exc}", highlight=False, markup=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            err.print("interrupted; what was indexed so far is kept")
            raise typer.Exit(130) from None
        except (OSError, sqlite3.Error) as exc:  # disk full, read-only or damaged files: one line
            err.print(
                f"[red]error:[/red] {escape(str(exc))}; check free disk space and permissions of the "
                "data dir and the corpus, then retry",
                highlight=False, markup=True,
            )  # fmt: skip
            raise typer.Exit(StoreError.exit_code) from None

    return wrapper  # type: ignore[return-value]


def _settings(
    config: Path | None, data_dir: Path | None, collection: str | None, hint: Path | None = None
) -> Settings:
    from docshelf.config import find_config, load_settings

    overrides: dict[str, Any] = {}
    if collection:
        overrides["collection"] = collection
    settings = load_settings(config or find_config(hint))
    if data_dir is not None:
        settings.store.data_dir = data_dir.expanduser()
    if overrides:
        settings = settings.model_copy(update=overrides)
    return settings


@app.callback()
def _root(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="debug logs on stderr")] = False,
) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )


@app.command()
@_handle_errors
def index(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="folders or URLs (web pages, public Google Drive links) to add and index; "
            "none = re-sync known folders and re-fetch known URLs"
        ),
    ] = None,
    collection: CollectionOpt = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
    reembed: Annotated[
        bool, typer.Option("--reembed", help="re-embed everything with the configured model")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help=f"exit {STRICT_EXIT} if any file was skipped")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Index folders: the first run indexes everything, later runs only what changed."""
    from docshelf.runtime import Runtime
    from docshelf.sources.remote import gather, is_url

    folders = [Path(p) for p in paths or [] if not is_url(p)]
    settings = _settings(config, data_dir, collection, folders[0] if folders else None)
    runtime = Runtime(settings)
    try:
        # URLs become mirror folders under the data dir; known mirrors are re-fetched (conditional GET)
        fetched = gather(settings, paths or [], runtime.store.collection_roots(settings.collection))
        if reembed:
            with progress_bar(not as_json) as bar:
                bar.add_task("re-embedding", total=None)
                count = runtime.indexer().reembed()
            err.print(f"re-embedded {count} chunks with {runtime.embedder.name}")
        with progress_bar(not as_json and sys.stderr.isatty()) as bar:
            task = bar.add_task("indexing", total=None)

            def progress(phase: str, done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            report = runtime.indexer(progress).sync(settings.collection, fetched.roots)
        if fetched.skipped:
            report.skipped[:0] = fetched.skipped
            runtime.store.set_skipped(settings.collection, report.skipped)
    finally:
        runtime.close()
    if as_json:
        print_json(report.as_dict())
    else:
        err.print(
            f"[bold]{report.collection}[/bold]: {len(report.added)} added, {len(report.updated)} updated, "
            f"{len(report.removed)} removed, {report.unchanged} unchanged, "
            f"{len(report.excluded)} excluded (rag: false), {len(report.skipped)} skipped; "
            f"{report.chunks_written} chunks written in {report.seconds:.1f}s",
            highlight=False,
        )
        for s in report.skipped:
            err.print(f"  [yellow]skipped[/yellow] {s.path}: {s.reason}", highlight=False)
    if strict and report.skipped:
        raise typer.Exit(STRICT_EXIT)


@app.command()
@_handle_errors
def forget(
    path: Annotated[
        str,
        typer.Argument(
            help="a document path (relative or absolute), a whole root folder, or a URL given to "
            "`index` (its whole mirror) or of one fetched page or Drive file"
        ),
    ],
    collection: CollectionOpt = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
) -> None:
    """Remove a document (or a root folder and all its documents) from the index."""
    from docshelf.runtime import Runtime
    from docshelf.sources.remote import drop_mirror, forget_target, is_url

    settings = _settings(config, data_dir, collection)
    runtime = Runtime(settings)
    try:
        target = forget_target(runtime.store, settings, path) if is_url(path) else path
        removed = runtime.indexer().forget(settings.collection, target)
        if is_url(path):
            drop_mirror(settings, target)
    finally:
        runtime.close()
    if not removed:
        raise NotFoundError(f"{path} is not in collection {settings.collection!r}; see `docshelf status`")
    err.print(f"removed {len(removed)} document(s)")


@app.command()
@_handle_errors
def search(
    query: Annotated[str, typer.Argument(help="what to look for, in any language")],
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=1000, help="number of hits")] = 10,
    mode: Annotated[str | None, typer.Option(help="hybrid | keyword | semantic")] = None,
    collection: Annotated[list[str] | None, typer.Option("--collection", "-c")] = None,
    path: Annotated[str | None, typer.Option("--path", help="glob on the document path")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="any of these tags")] = None,
    file_type: Annotated[list[str] | None, typer.Option("--type", help="file type, e.g. markdown")] = None,
    include_superseded: Annotated[
        bool, typer.Option(help="also show `lifecycle: superseded` documents")
    ] = False,
    rerank: Annotated[
        bool | None,
        typer.Option("--rerank/--no-rerank", help="cross-encoder rerank of the top hits (rerank.model)"),
    ] = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search the index: score, file:lines, heading and a highlighted snippet per hit."""
    from rich.table import Table

    from docshelf.runtime import Runtime
    from docshelf.store.base import SearchFilter

    if mode not in (None, "hybrid", "keyword", "semantic"):
        raise typer.BadParameter("mode must be hybrid, keyword or semantic")
    settings = _settings(config, data_dir, None)
    runtime = Runtime(settings)
    flt = SearchFilter(
        collections=tuple(collection or ()), path_glob=path, tags=tuple(tag or ()),
        file_types=tuple(file_type or ()), include_superseded=include_superseded,
    )  # fmt: skip
    try:
        searcher = runtime.searcher()
        if settings.rerank.enabled if rerank is None else rerank:
            from docshelf.search.rerank import get_reranker, reranked_search

            reranker = get_reranker(settings.rerank)
            result = reranked_search(
                searcher,
                reranker,
                query,
                k,
                settings.rerank.top_n,
                mode=mode,  # type: ignore[arg-type]
                flt=flt,
            )
        else:
            result = searcher.search(query, k=k, mode=mode, flt=flt)  # type: ignore[arg-type]
    finally:
        runtime.close()
    if as_json:
        print_json(result.as_dict())
        return
    if not result.hits:
        err.print(f"no results: {result.note}", highlight=False)
        raise typer.Exit(1)
    table = Table(title=f"{len(result.hits)} hits ({result.mode}, {result.took_ms:.0f} ms)", show_lines=True)
    table.add_column("score", justify="right")
    table.add_column("where", no_wrap=True)
    table.add_column("heading", overflow="fold")
    table.add_column("snippet", overflow="fold")
    for hit in result.hits:
        table.add_row(
            f"{hit.score:.3f}", hit.citation, " > ".join(hit.heading_path), hit.snippet.replace("**", "")
        )
    out.print(table)


@app.command(name="eval")
@_handle_errors
def eval_(
    folder: Annotated[
        Path, typer.Argument(help="a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels/)")
    ],
    split: Annotated[str, typer.Option(help="qrels split")] = "test",
    mode: Annotated[list[str] | None, typer.Option(help="modes to score (default all three)")] = None,
    workdir: Annotated[Path | None, typer.Option(help="keep the eval index here to reuse embeddings")] = None,
    queries: Annotated[
        Path | None, typer.Option(help="queries.jsonl with the same ids from elsewhere (another language)")
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Index a BEIR-layout set in a scratch index and report nDCG@10, recall@100, MRR@10, latency."""
    from rich.table import Table

    from docshelf.config import load_settings
    from docshelf.runtime import Runtime
    from docshelf.search.evaluate import evaluate, load_beir, write_corpus

    data = load_beir(folder, split, queries)
    settings = load_settings(config)
    scratch = workdir or Path(tempfile.mkdtemp(prefix="docshelf-eval-"))
    settings.store.data_dir = scratch / "index"
    runtime = Runtime(settings)
    try:
        names = write_corpus(data, scratch / "corpus")
        started = time.perf_counter()
        with progress_bar(sys.stderr.isatty()) as bar:
            task = bar.add_task(f"indexing {data.name}", total=len(names))
            report = runtime.indexer(lambda p, d, t: bar.update(task, completed=d)).sync(
                "eval", [scratch / "corpus"]
            )
            index_s = time.perf_counter() - started
            modes: list[Mode] = [m for m in (mode or ["keyword", "semantic", "hybrid"])]  # type: ignore[misc]
            qtask = bar.add_task("querying", total=len(data.queries) * len(modes))
            done = [0]

            def tick(m: str, d: int, t: int) -> None:
                done[0] += 1
                bar.update(qtask, completed=done[0])

            scores = evaluate(runtime.searcher(), data, names, "eval", modes, tick)
    finally:
        runtime.close()
        if workdir is None:
            shutil.rmtree(scratch, ignore_errors=True)
    rows = [s.__dict__ | {"set": data.name, "split": split, "model": runtime.embedder.name} for s in scores]
    if as_json:
        print_json({"index_seconds": round(index_s, 1), "chunks": report.chunks_written, "results": rows})
        return
    table = Table(
        title=f"{data.name} ({split}, {len(data.queries)} queries, {runtime.embedder.name}); "
        f"indexed in {index_s:.0f}s"
    )
    for col in ("mode", "nDCG@10", "recall@100", "MRR@10", "p50 ms", "p95 ms"):
        table.add_column(col, justify="right")
    for s in scores:
        table.add_row(
            s.mode,
            f"{s.ndcg10:.4f}",
            f"{s.recall100:.4f}",
            f"{s.mrr10:.4f}",
            f"{s.p50_ms:.1f}",
            f"{s.p95_ms:.1f}",
        )
    out.print(table)


def main() -> None:
    app()


from docshelf.cli.serve import register as _register_serve  # noqa: E402

_register_serve(app)

from docshelf.cli.live import register as _register_live  # noqa: E402

_register_live(app)

from docshelf.cli.doctor import register as _register_doctor  # noqa: E402

_register_doctor(app)

from docshelf.cli.ask import register as _register_ask  # noqa: E402

_register_ask(app)

from docshelf.cli.migrate import register as _register_migrate  # noqa: E402

_register_migrate(app)

from docshelf.cli.status import register as _register_status  # noqa: E402

_register_status(app)
