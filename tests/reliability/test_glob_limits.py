"""Pathological path globs answer the same on both stores (PostgreSQL's regex engine has limits
that Python's fnmatch does not), or are refused with one line on both."""

from __future__ import annotations

import fnmatch

import pytest

from docshelf.errors import DocshelfError, StoreError
from docshelf.shelf import Shelf

pytestmark = pytest.mark.usefixtures("backend")

GLOBS = [
    "*" * 3000,  # the report: a regular expression too complex for PostgreSQL
    "runbooks/" + "*" * 3000,
    "[!x]" * 2 + "*" * 2000,
    "*" + "?*" * 40,
]


def test_pathological_globs_answer_like_fnmatch_or_are_refused_alike(indexed_shelf: Shelf) -> None:
    shelf = indexed_shelf
    docs = [d for d in shelf.list_documents() if d.lifecycle != "superseded"]  # left out by default
    for glob in GLOBS:
        want = {d.path for d in docs if fnmatch.fnmatchcase(d.path, glob)}
        hits = shelf.search("deploy", k=50, mode="semantic", path_glob=glob).hits
        assert {h.path for h in hits} == want, glob[:40]
    # fnmatch takes seconds per path on these (``*a`` x 20,000: 2 s), PostgreSQL refuses them
    for glob in ("*a" * 20_000, "*?" * 1500, "x" * 5000):
        with pytest.raises(DocshelfError, match="path glob") as caught:
            shelf.search("deploy", mode="semantic", path_glob=glob)
        assert "\n" not in str(caught.value) and not isinstance(caught.value, StoreError)
