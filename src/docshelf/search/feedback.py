"""Dense pseudo-relevance feedback for short statements (Rocchio on the query vector).

A query of a few words ("vitamin D", "statin side effects") gives the dense model little to go on:
its vector is moved towards the vectors of the first hits the fusion found (keyword and dense
evidence together), and the dense side is searched again with it. Questions keep their vector
(they paraphrase their answer well), and so does a longer statement, whose own words are evidence
enough. Chosen on nfcorpus dev and scifact train (round thirteen, in docs/benchmarks.md's git
history): the top 3 fused hits at weight 1, for statements of up to 6 analysed terms, half of them
in the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from docshelf.embed.base import Vectors

if TYPE_CHECKING:
    import numpy as np
else:
    from docshelf.lazy import numpy as np

__all__ = [
    "FEEDBACK_HITS", "FEEDBACK_MAX_TERMS", "FEEDBACK_MIN_COVERAGE", "FEEDBACK_WEIGHT", "applies",
    "is_question", "moved",
]  # fmt: skip

FEEDBACK_HITS = 3
FEEDBACK_WEIGHT = 1.0
FEEDBACK_MAX_TERMS = 6
FEEDBACK_MIN_COVERAGE = 0.5
_QUESTION_MARKS = ("?", "\uff1f", "\u061f")  # ASCII, full-width (Chinese, Japanese), Arabic


def is_question(query: str) -> bool:
    """True for a query written as a question: it ends in a question mark (or opens with "¿").

    The mark, not the words: "how to deploy" is a keyword query as often as a question, and a
    question-word list per language would guess where the writer said it outright.
    """
    text = query.strip()
    return text.endswith(_QUESTION_MARKS) or text.startswith("\u00bf")


def applies(query: str, terms: int, coverage: float, most: int = FEEDBACK_MAX_TERMS) -> bool:
    """Whether a query of ``terms`` analysed terms gets feedback: a statement of 1-6 terms, at least
    half of them in the index (``coverage``). Below that the first fused hits rest on a word or two
    the query happens to share (`vacation days request`: "three working days" in a postmortem),
    and moving towards them buried the German vacation policy the dense side had first."""
    return 0 < terms <= most and coverage >= FEEDBACK_MIN_COVERAGE and not is_question(query)


def moved(query: Vectors, hits: Sequence[Vectors], weight: float = FEEDBACK_WEIGHT) -> Vectors | None:
    """normalise(query + weight * mean of the hits' vectors); None without hits or for a zero sum."""
    if not hits:
        return None
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    rows = [np.asarray(h, dtype=np.float32).reshape(-1) for h in hits]
    if any(r.shape != q.shape for r in rows):  # vectors of another model (a re-embed under way)
        return None
    out = q + np.float32(weight) * np.mean(np.stack(rows), axis=0)
    norm = float(np.linalg.norm(out))
    if not norm:
        return None
    result: Vectors = (out / norm).astype(np.float32)
    return result
