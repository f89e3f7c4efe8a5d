"""A set's index as bench/eval_all.py kept it (``WORK/e5-NAME/index``), for the tuning scripts."""

from __future__ import annotations

from pathlib import Path

from docshelf.config import Settings, load_settings
from docshelf.search.evaluate import EvalSet, file_name, load_beir


def kept_set(
    name: str, split: str, eval_data: Path, work: Path, questions: str | None = None,
    index: Path | None = None,
) -> tuple[EvalSet, dict[str, str], Settings]:  # fmt: skip
    """(the set's split, file name -> document id, read-only e5 settings on its kept index);
    ``questions``: another set's queries with the same ids (xquad-en's over xquad-de); ``index``:
    the index elsewhere than eval_all keeps it (`docshelf eval --workdir W` keeps W/index)."""
    other = eval_data / questions / "queries.jsonl" if questions else None
    data = load_beir(eval_data / name, split, other)
    settings = load_settings()
    settings.store.data_dir = index or work / f"e5-{name}" / "index"
    settings.embed.model, settings.store.read_only = "e5", True
    return data, {file_name(d): d for d in data.corpus}, settings
