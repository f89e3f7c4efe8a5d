"""Hit order and confidence agree: read down a result list, the confidence never rises."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from docshelf.search.confidence import confidence, in_order
from docshelf.shelf import Shelf

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "corpus"
QUERIES = ("deploy rollback", "incident postmortem timeline", "api rate limit errors")
MODES = ("keyword", "semantic", "hybrid")


def test_each_confidence_is_capped_by_the_one_above() -> None:
    assert in_order([0.6, 0.4, 0.5, 0.2, 0.3]) == [0.6, 0.4, 0.4, 0.2, 0.2]
    assert in_order([]) == []


@pytest.mark.usefixtures("backend")
def test_confidence_never_rises_down_a_result_list(shelf: Shelf, tmp_path: Path) -> None:
    """The model scores each hit on its own evidence (its terms, its ranks, its cosine), so a hit
    the fusion put fourth could read as more trusted than the third: `deploy rollback` over the
    sample runbooks gave 0.59, 0.33, 0.34, 0.59. A page of hits must also continue the one before,
    and ``min_confidence`` cut the list at one place."""
    shutil.copytree(SAMPLES, tmp_path / "corpus")
    shelf.index([tmp_path / "corpus"], collection="test")
    disordered = 0
    for query in QUERIES:
        for mode in MODES:
            hits = shelf.search(query, mode=mode, k=10).hits
            assert hits, (query, mode)
            values = [h.confidence for h in hits]
            assert values == sorted(values, reverse=True), (query, mode, values)
            first = shelf.search(query, mode=mode, k=3).hits
            assert [h.confidence for h in first] == values[:3], (query, mode)
            floor = values[len(values) // 2]
            kept = shelf.search(query, mode=mode, k=10, min_confidence=floor).hits
            assert [h.chunk_id for h in kept] == [h.chunk_id for h in hits if h.confidence >= floor]
            # the case this covers: the model alone rates a hit above one the ranking put first
            model = shelf.model_name
            own = [confidence(h.evidence, model, mode) for h in hits if h.evidence is not None]
            disordered += any(b > a for a, b in itertools.pairwise(own))
    assert disordered
