"""Pathological path globs answer the same on both stores (PostgreSQL's regex engine has limits
that Python's fnmatch does not), or are refused with one line on both."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from docshelf.errors import DocshelfError, StoreError
from docshelf.runtime import Runtime
from docshelf.store.base import SearchFilter

pytestmark = pytest.mark.usefixtures("backend")

GLOBS = [
    "*" * 3000,  # the report: a regular expression too complex for PostgreSQL
    "runbooks/" + "*" * 3000,
    "[!x]" * 2 + "*" * 2000,
    "*" + "?*" * 40,
]


@pytest.mark.parametrize("glob", GLOBS, ids=["stars", "folder-stars", "sets-stars", "many-any"])
def test_a_pathological_glob_answers_like_fnmatch(runtime: Runtime, corpus: Path, glob: str) -> None:
    runtime.indexer().sync("test", [corpus])
    want = {
        d.path for d in runtime.store.iter_documents()
        if fnmatch.fnmatchcase(d.path, glob) and d.lifecycle != "superseded"  # left out by default
    }  # fmt: skip
    hits = runtime.searcher().search("deploy", k=50, mode="semantic", flt=SearchFilter(path_glob=glob)).hits
    assert {h.path for h in hits} == want


@pytest.mark.parametrize("glob", ["*a" * 20_000, "*?" * 1500, "x" * 5000])
def test_a_glob_too_complex_to_mean_anything_is_refused_on_both(
    runtime: Runtime, corpus: Path, glob: str
) -> None:
    """fnmatch takes seconds per path on these (``*a`` x 20,000: 2 s), PostgreSQL refuses them."""
    runtime.indexer().sync("test", [corpus])
    with pytest.raises(DocshelfError, match="path glob") as caught:
        runtime.searcher().search("deploy", mode="semantic", flt=SearchFilter(path_glob=glob))
    assert "\n" not in str(caught.value) and not isinstance(caught.value, StoreError)
