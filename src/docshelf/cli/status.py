"""`docshelf status`: one line per collection; roots, settings, skipped and stale files on request."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any

import typer
from rich.cells import cell_len
from rich.text import Text

from docshelf.cli.common import ConfigOpt, DataDirOpt, JsonOpt, handle_errors, load
from docshelf.cli.output import data, out, print_json
from docshelf.cli.render import wrapped
from docshelf.cli.report import skipped_lines

__all__ = ["ago", "columns", "register", "share", "size"]


def ago(ts: float | None, now: float | None = None) -> str:
    """How long ago, in the unit a person would say it."""
    if ts is None:
        return "never"
    s = max(0.0, (now or time.time()) - ts)
    if s < 60:
        return "just now"
    for unit, seconds in (("day", 86400), ("h", 3600), ("min", 60)):
        if s >= seconds:
            n = int(s // seconds)
            return f"{n} {unit}{'s' if unit == 'day' and n > 1 else ''} ago"
    return "just now"  # unreachable: s >= 60 matched "min"


def size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value, unit = n / 1024, "KB"
    for bigger in ("MB", "GB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:.1f} {unit}"


def columns(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int]) -> list[Text]:
    """Plain aligned columns (no box, no trailing blanks): readable in a terminal and in a pipe."""
    widths = [max(cell_len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str], style: str = "") -> Text:
        padded = [
            " " * (w - cell_len(c)) + c if i in right else c + " " * (w - cell_len(c))
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return data("  ".join(padded).rstrip(), style)

    return [line(header, "bold"), *(line(r) for r in rows)]


def _table(d: dict[str, Any], stale_by: dict[str, int], skipped_by: dict[str, int]) -> list[Text]:
    rows = []
    for c in d["collections"]:
        build = c["last_build"] or {}
        finished = build.get("finished_at")
        when = ago(datetime.fromisoformat(finished).timestamp()) if finished else "never"
        commit = (build.get("git_commit") or "-")[:7] + (" dirty" if build.get("git_dirty") else "")
        rows.append([
            c["name"], str(c["documents"]), str(c["chunks"]), share(c["vector_share"]), when, commit,
            str(stale_by.get(c["name"], 0)), str(skipped_by.get(c["name"], 0)),
        ])  # fmt: skip
    header = ["collection", "documents", "chunks", "vectors", "last build", "commit", "stale", "skipped"]
    return columns(header, rows, right=(1, 2, 3, 6, 7))


def share(value: float) -> str:
    """A share as a whole percentage, rounded down: 100% only when it is all."""
    return f"{int(value * 100)}%"


def _watch_lines(watch: dict[str, dict[str, Any]]) -> list[Text]:
    lines = []
    for name, w in watch.items():
        state = w.get("state")
        if state != "stopped" and w.get("alive") is False:
            state = "dead (its process is gone)"
        error = f"; last error {ago(w['last_error_at'])}: {w['last_error']}" if w.get("last_error") else ""
        lines.append(
            data(f"watch {name}: {state} (pid {w.get('pid')}), last sync {ago(w.get('last_sync_at'))}, "
                 f"{w.get('restarts', 0)} restarts{error}", "red" if error or "dead" in str(state) else "")
        )  # fmt: skip
    return lines


def _say(text: Text, rest: int = 4) -> None:
    out.print(wrapped(text, out, first=0, rest=rest))


def _print_summary(d: dict[str, Any]) -> None:
    model = f"{d['model']} ({d['dim']}-d)" if d["model"] else "no model yet"
    _say(data(f"index  {d['data_dir']} ({d['store']}, {size(d['size_bytes'])})", "dim"))
    _say(data(f"model  {model}", "dim"))
    if not d["collections"]:
        out.print(data("nothing indexed yet: docshelf index PATH"))
        return
    stale_by: dict[str, int] = {}
    for s in d["stale"]:
        stale_by[s["collection"]] = stale_by.get(s["collection"], 0) + 1
    skipped_by: dict[str, int] = {}
    for s in d["skipped"]:
        skipped_by[s["collection"]] = skipped_by.get(s["collection"], 0) + 1
    for line in _table(d, stale_by, skipped_by):
        out.print(line)
    if not d["keyword_index_in_sync"]:
        _say(
            Text("the keyword index is behind the database: the next `docshelf index` rebuilds it", "yellow")
        )
    if behind := _behind(d):
        _say(data(f"on disk since indexed: {behind}: docshelf index (list: --stale)", "yellow"))
    if missing := sum(c["chunks"] - c["embedded"] for c in d["collections"]):
        _say(data(f"{missing} chunks have no vector yet: semantic search leaves them out, keyword search "
                  "finds them; `docshelf index` computes them", "yellow"))  # fmt: skip
    if pending := d.get("reembed_pending"):
        done = f"{pending['staged']} of {pending['chunks']} chunks done"
        _say(data(f"a re-embed to {pending['model']} is unfinished ({done}): docshelf index with that "
                  "model finishes it; the old vectors serve searches until then", "yellow"))  # fmt: skip
    for line in _watch_lines(d["watch"]):
        _say(line)


def _behind(d: dict[str, Any]) -> str:
    """What the next `docshelf index` would take in or drop: "2 new, 1 changed, 1 missing"."""
    new = d.get("new_files") or 0
    changed = sum(s["reason"] == "modified" for s in d["stale"])
    # the whole list is asked for: the rest of stale_documents is gone (files, or a whole folder)
    counts = ((new, "new"), (changed, "changed"), (d["stale_documents"] - changed, "missing"))
    return ", ".join(f"{n} {what}" for n, what in counts if n > 0)


def _pairs(values: Any) -> str:
    if not isinstance(values, dict):
        return str(values)
    return ", ".join(f"{k} = {v!r}" if isinstance(v, str) else f"{k} = {v}" for k, v in values.items())


def _print_details(d: dict[str, Any], roots: bool, settings: bool, skipped: bool, stale: bool) -> None:
    for c in d["collections"] if roots or settings else []:
        out.print(Text.assemble("\n", data(f"collection {c['name']}", "bold")))
        if roots:
            for root in c["roots"]:
                under = c.get("cited_under", {}).get(root)
                _say(data(f"  root {root}" + (f" (its files cited as {under}...)" if under else "")))
        if settings:
            _say(data(f"  settings from {c['settings_origin'] or 'the defaults'}"))
            for section, values in sorted((c["settings"] or {}).items()):
                _say(data(f"  {section}: {_pairs(values)}"))
    if settings and d["index_settings"]:
        shared = dict(d["index_settings"])
        out.print(data(f"\nindex-wide settings from {shared.pop('origin', None) or 'the defaults'}", "bold"))
        for section, values in sorted(shared.items()):
            _say(data(f"  {section}: {_pairs(values)}"))
    if skipped:
        if not d["skipped"]:
            out.print(Text("\nno skipped files", style="bold"))
        for name in sorted({s["collection"] for s in d["skipped"]}):
            items = [(s["path"], s["reason"]) for s in d["skipped"] if s["collection"] == name]
            out.print(Text.assemble("\n", data(f"{len(items)} skipped in {name}", "bold")))
            for line in skipped_lines(items, shown=None):
                _say(line, rest=6)
    if stale:
        out.print(Text("\nstale files" if d["stale"] else "\nno stale files", style="bold"))
        for s in d["stale"]:
            _say(data(f"  {s['collection']}: {s['path']}: {s['reason']}"))


def status(
    roots: Annotated[bool, typer.Option("--roots", help="the folders of each collection")] = False,
    settings: Annotated[
        bool, typer.Option("--settings", help="the settings recorded with each collection")
    ] = False,
    skipped: Annotated[bool, typer.Option("--skipped", help="every skipped file, grouped by reason")] = False,
    stale: Annotated[
        bool, typer.Option("--stale", help="files new, changed or gone on disk since indexed")
    ] = False,
    everything: Annotated[bool, typer.Option("--all", "-a", help="all of the above")] = False,
    config: ConfigOpt = None,
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One line per collection: documents, chunks, last build, corpus commit, stale and skipped files."""
    from docshelf.cli.common import open_shelf

    with open_shelf(load(config, data_dir, None, read_only=True)) as shelf:
        d: dict[str, Any] = shelf.status(stale_limit=None).as_dict()
    if as_json:
        print_json(d)
        return
    _print_summary(d)
    if everything:
        roots = settings = skipped = stale = True
    _print_details(d, roots, settings, skipped, stale)
    hints = [flag for flag, on in (("--roots", roots), ("--settings", settings), ("--skipped", skipped),
                                   ("--stale", stale)) if not on]  # fmt: skip
    if hints and out.is_terminal:
        out.print(Text(f"more: docshelf status {' | '.join(hints)} | --json", style="dim"))


def register(app: typer.Typer) -> None:
    """Add `status` to the docshelf CLI."""
    app.command()(handle_errors(status))
