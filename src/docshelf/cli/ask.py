"""`docshelf ask`: an answer from the configured LLM over the best passages, with citations.

The passages are sent to the LLM endpoint set in ``answer.*`` (local or remote).
"""

from __future__ import annotations

from typing import Annotated

import typer

from docshelf.cli.common import (
    CollectionsOpt,
    ConfigOpt,
    DataDirOpt,
    JsonOpt,
    PathGlobOpt,
    TagsOpt,
    check_collections,
    handle_errors,
    load,
)
from docshelf.cli.output import data, err, out, print_json

__all__ = ["register"]


def ask(
    question: Annotated[str, typer.Argument(help="the question, in any language; - reads it from stdin")],
    passages: Annotated[
        int | None, typer.Option("--passages", "-n", min=1, max=30, metavar="N", help="passages sent")
    ] = None,
    collection: CollectionsOpt = None,
    path: PathGlobOpt = None,
    tag: TagsOpt = None,
    rerank: Annotated[
        bool | None, typer.Option("--rerank/--no-rerank", help="cross-encoder rerank before answering")
    ] = None,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer a question with the configured LLM (answer.*): it receives the best passages."""
    from docshelf.cli.common import open_shelf
    from docshelf.cli.direct import stdin_query

    question = stdin_query("ask") if question == "-" else question
    with open_shelf(load(config, data_dir, None, read_only=True)) as shelf:
        check_collections(shelf, collection or ())
        result = shelf.ask(
            question, passages=passages, collections=tuple(collection or ()), path_glob=path,
            tags=tuple(tag or ()), rerank=rerank,
        )  # fmt: skip
    if as_json:
        print_json(result.as_dict())
        return
    if not result.passages:
        err.print(data(f"no answer: {result.note}"))
        raise typer.Exit(1)
    out.print(data(result.answer))
    out.print()
    cited = {p.number for p in result.citations}
    for p in result.passages:
        mark = "*" if p.number in cited else " "
        out.print(data(f"{mark}[{p.number}] {p.location}  {p.chunk_id}"))
    if result.note:
        err.print(data(f"note: {result.note}"))
    err.print(data(f"({result.model} at {result.endpoint}; * = cited)", "dim"))


def register(app: typer.Typer) -> None:
    app.command(name="ask")(handle_errors(ask))
