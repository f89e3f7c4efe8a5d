"""How far a hit can be trusted: a calibrated 0-1 confidence, and the "nearest neighbours" note.

The confidence is a logistic model over evidence every retriever gives (share of the query's terms
the hit contains, its rank in each list, its cosine, its position, the query's term coverage in the
index). `bench/fit_confidence.py` fits it on the train/dev qrels of the shared eval sets and writes
the coefficients to ``confidence.json`` next to this module; refit after fusion or analyzer changes.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docshelf.analyze.scripts import scripts_of

if TYPE_CHECKING:
    from docshelf.store.base import Store

VectorCounts = tuple[int, int]
"""(chunks still without their vector, all chunks) of the collections searched."""

__all__ = [
    "FEATURES",
    "NEAREST_NOTE",
    "NEAREST_TOP",
    "UNREADABLE",
    "UNREADABLE_NOTE",
    "Evidence",
    "VectorCounts",
    "confidence",
    "coverage_note",
    "in_order",
    "nearest_neighbours",
    "telling",
    "vector",
    "vector_counts",
]

FEATURES = ("term_share", "keyword_rr", "semantic_rr", "semantic_score", "position_rr", "coverage")
FIT_PATH = Path(__file__).with_name("confidence.json")
NEAREST_NOTE = (
    "no query word occurs in the top hits: these are nearest neighbours by meaning and may be "
    "unrelated; check confidence, rephrase, or tell the user the documents may not cover this"
)
NEAREST_TOP = 3  # hits looked at for the note
UNREADABLE_NOTE = (
    "the query reads as no language the embedding model knows (random characters, or a script it "
    "never saw), and no query word occurs in the top hits: these are nearest neighbours and very "
    "likely unrelated; check the query"
)
# Below this mean log-probability per letter (embed.base.Plausible) a query reads as no language.
# Real text scores above -16 in every script measured: 1 % of 2- to 5-word fragments of 31 Bible
# translations score below -7 (Latin, Arabic), -8 (Cyrillic), -13 (Han, Hangul), -16 (Devanagari,
# Bengali); the XQuAD and CMRC questions (zh, de, en) score -10 or above at the 5 % mark. Random
# ideographs and Hangul syllables score -21 and lower at the 95 % mark, runes and Tifinagh -31.
# Random letters of an alphabet the model knows (Latin, Cyrillic, Arabic) score like short real
# words (-6 to -11): the model cannot tell those from a name or a rare word, and nor can this.
UNREADABLE = -18.0
# used until a fit exists: more shared terms and better ranks mean more confidence
_PRIOR = {"intercept": -2.0, "weights": [2.5, 1.0, 1.0, 0.0, 0.5, 1.0]}


@dataclass(frozen=True)
class Evidence:
    """What is known about one hit of one query."""

    term_share: float  # distinct query terms found in the hit (with its title and headings)
    keyword_rank: int | None  # 1-based rank in the keyword list, None when absent
    semantic_rank: int | None
    semantic_score: float | None  # cosine of the dense retriever
    position: int  # 1-based rank in the fused result
    coverage: float  # share of the query's terms that occur anywhere in the index


def vector(e: Evidence) -> list[float]:
    """The features in FEATURES order."""
    return [
        e.term_share,
        1.0 / e.keyword_rank if e.keyword_rank else 0.0,
        1.0 / e.semantic_rank if e.semantic_rank else 0.0,
        e.semantic_score or 0.0,
        1.0 / e.position,
        e.coverage,
    ]


@functools.cache
def _fits() -> dict[str, Any]:
    """The fitted coefficients in confidence.json ("model/mode" -> fit); none when unreadable."""
    try:
        loaded: dict[str, Any] = json.loads(FIT_PATH.read_text("utf-8")).get("fits", {})
    except (OSError, ValueError):
        return {}
    return loaded


def _fit_for(model: str, mode: str) -> dict[str, Any]:
    """This model's fit for the mode, else the model-free one ("*": no cosine, whose scale is each
    model's own), else a prior: any model a user configures gets a confidence that orders hits."""
    fits = _fits()
    base = mode.split("+", 1)[0]
    return fits.get(f"{model}/{base}") or fits.get(f"*/{base}") or _PRIOR


def confidence(e: Evidence, model: str, mode: str) -> float:
    """P(the hit is relevant), from the fit for this model and mode (else any model's, else a prior)."""
    fit = _fit_for(model, mode)
    z = float(fit["intercept"]) + sum(w * x for w, x in zip(fit["weights"], vector(e), strict=True))
    return round(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))), 3)


def in_order(values: Sequence[float]) -> list[float]:
    """Confidences down a result list, each capped by the one above it (a running minimum).

    The model scores each hit on its own evidence, so a hit below could score above one the
    ranking put first; read down the list, that says the order is wrong. A hit is never more
    trusted than a hit above it: order and confidence agree, ``min_confidence`` cuts a list at one
    place, and the first hits' confidences do not depend on how many hits were asked for (a next
    page continues the one before). Only ever lowered, so a hit kept by ``min_confidence`` still
    had at least that confidence from its own evidence.
    """
    out: list[float] = []
    for value in values:
        out.append(min(value, out[-1]) if out else value)
    return out


def telling(matched: Sequence[str], languages: Sequence[str]) -> list[str]:
    """The matched words that are not question words of ``languages`` (Snowball names): "how do I
    bake bread?" matching "do" in a runbook is no sign the documents cover it."""
    from docshelf.analyze.stopwords import QUESTION_WORDS

    words = frozenset().union(*(QUESTION_WORDS.get(lg, frozenset()) for lg in languages))
    return [m for m in matched if not all(w.casefold() in words for w in m.split())]


def nearest_neighbours(
    query_terms: Sequence[str],
    top_matched: Sequence[Sequence[str]],
    top_same_language: Sequence[bool],
    index_scripts: set[str],
) -> bool:
    """True when none of the top hits shares a term with the query although the query has words in
    a script the index holds (or a number) and one of those hits is in the query's language: keyword matching
    could have found them and found nothing. Hits in another language (an English question answered
    by a German or Chinese passage) are cross-lingual matches, no such evidence."""
    if any(top_matched) or not any(top_same_language):
        return False
    scripts = [scripts_of([t]) for t in query_terms]
    # a term without letters (`422`, `0.110.0`) is matched exactly whatever the index's script
    return any(not s for s in scripts) or bool(set().union(*scripts) & index_scripts)


def vector_counts(store: Store, collections: Sequence[str]) -> VectorCounts:
    """How many of these collections' chunks lack their vector, and of how many (counted only when
    some do: the first count is cheap at 0, the usual answer)."""
    missing = store.missing_vectors(collections)
    return missing, store.chunk_count(collections) if missing else 0


def coverage_note(missing: int, total: int) -> str:
    """What a search says while vectors are still being computed: how much semantic search covers
    (rounded down: "100%" only once every chunk has its vector)."""
    share = 1 - missing / total if total else 0.0
    return (
        f"semantic search covers {int(share * 100)}% of chunks so far; the others are matched by "
        "keyword only until their vectors are computed (`docshelf index` finishes them)"
    )
