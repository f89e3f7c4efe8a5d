"""Pathological path globs answer the same on both stores (PostgreSQL's regex engine has limits
that Python's fnmatch does not), or are refused with one line on both."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from docshelf.errors import DocshelfError, StoreError
from docshelf.store.base import SearchFilter
from docshelf.testing import Stages

pytestmark = pytest.mark.usefixtures("backend")

GLOBS = [
    "*" * 3000,  # the report: a regular expression too complex for PostgreSQL
    "runbooks/" + "*" * 3000,
    "[!x]" * 2 + "*" * 2000,
    "*" + "?*" * 40,
]


def test_pathological_globs_answer_like_fnmatch_or_are_refused_alike(stages: Stages, corpus: Path) -> None:
    stages.indexer().sync("test", [corpus])
    searcher = stages.searcher()
    docs = [d for d in stages.store.iter_documents() if d.lifecycle != "superseded"]  # left out by default
    for glob in GLOBS:
        want = {d.path for d in docs if fnmatch.fnmatchcase(d.path, glob)}
        hits = searcher.search("deploy", k=50, mode="semantic", flt=SearchFilter(path_glob=glob)).hits
        assert {h.path for h in hits} == want, glob[:40]
    # fnmatch takes seconds per path on these (``*a`` x 20,000: 2 s), PostgreSQL refuses them
    for glob in ("*a" * 20_000, "*?" * 1500, "x" * 5000):
        with pytest.raises(DocshelfError, match="path glob") as caught:
            searcher.search("deploy", mode="semantic", flt=SearchFilter(path_glob=glob))
        assert "\n" not in str(caught.value) and not isinstance(caught.value, StoreError)
