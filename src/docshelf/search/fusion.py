"""Fusing ranked lists from the keyword and dense retrievers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docshelf.config import SearchSettings

__all__ = [
    "convex_combination",
    "fuse_hybrid",
    "fusion_weights",
    "hybrid_weights",
    "keyword_lead",
    "lone_scale",
    "long_query_share",
    "weighted_rrf",
    "zscore_combination",
]

Ranked = Sequence[tuple[str, float]]
# per list, the ids it could not rank at all (the dense side: chunks whose vector is not computed
# yet); such an id is fused from the other lists alone, their weights made whole again, where
# being absent from a list otherwise counts against it
Unscored = Mapping[str, AbstractSet[str]]


def weighted_rrf(
    lists: Mapping[str, Ranked], weights: Mapping[str, float], k: int = 60, unscored: Unscored | None = None
) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: sum of weight / (k + rank) over the lists an id appears in."""
    fused: dict[str, float] = {}
    for name, ranked in lists.items():
        w = weights.get(name, 1.0)
        for rank, (item, _) in enumerate(ranked, start=1):
            fused[item] = fused.get(item, 0.0) + w / (k + rank)
    _made_whole(fused, {n: weights.get(n, 1.0) for n in lists}, unscored)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def _made_whole(fused: dict[str, float], weights: Mapping[str, float], unscored: Unscored | None) -> None:
    """Scale the fused score of each id some lists could not rank up by the share of the weight
    of the lists that could (in place): as if those had ranked it as the others did."""
    total = sum(weights.values())
    if not unscored or not total:
        return
    for item in fused:
        absent = sum(w for name, w in weights.items() if item in unscored.get(name, ()))
        if 0 < absent < total:
            fused[item] *= total / (total - absent)


def convex_combination(
    lists: Mapping[str, Ranked], weights: Mapping[str, float], unscored: Unscored | None = None
) -> list[tuple[str, float]]:
    """Min-max normalise each list's scores, then a weighted sum (absent = 0)."""
    fused: dict[str, float] = {}
    total = sum(weights.get(n, 1.0) for n in lists) or 1.0
    for name, ranked in lists.items():
        if not ranked:
            continue
        scores = [s for _, s in ranked]
        lo, hi = min(scores), max(scores)
        span = hi - lo or 1.0
        w = weights.get(name, 1.0) / total
        for item, score in ranked:
            fused[item] = fused.get(item, 0.0) + w * (score - lo) / span
    _made_whole(fused, {n: weights.get(n, 1.0) for n, ranked in lists.items() if ranked}, unscored)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def zscore_combination(
    lists: Mapping[str, Ranked], weights: Mapping[str, float], lone_scale: float = 1.0,
    unscored: Unscored | None = None,
) -> list[tuple[str, float]]:  # fmt: skip
    """Standardise each list's scores (z-score), then a weighted sum.

    An id missing from a list gets that list's lowest z-score, not zero: being
    absent from a retriever's top candidates is evidence against it. Chosen by
    measurement on train/dev splits (see docs/benchmarks.md): z-scores keep a
    weak dense list from swamping BM25 better than min-max or RRF. A list of one hit (all
    scores alike) stands out by how few of the candidates it holds, times ``lone_scale``. An id in
    ``unscored[name]`` is not given that list's lowest z-score: that list could not rank it at
    all, so it is fused from the others (``_made_whole``).
    """
    normed: dict[str, dict[str, float]] = {}
    floors: dict[str, float] = {}
    universe = len({item for ranked in lists.values() for item, _ in ranked})
    for name, ranked in lists.items():
        if not ranked:
            continue
        scores = [s for _, s in ranked]
        mean = sum(scores) / len(scores)
        std = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5
        if std:
            normed[name] = {item: (score - mean) / std for item, score in ranked}
            floors[name] = min(normed[name].values())
        else:
            # every score alike, a single hit above all (the one passage holding "0.110.0"): as
            # if the candidates it lacks scored 0. Standardised among themselves they all got 0,
            # the floor too, and the list counted for nothing: that passage came 25th.
            present, absent = len(ranked), universe - len(ranked)
            high = (absent / present) ** 0.5 * lone_scale if absent else 0.0
            normed[name] = dict.fromkeys((item for item, _ in ranked), high)
            floors[name] = -((present / absent) ** 0.5) if absent else 0.0
    total = sum(weights.get(n, 1.0) for n in normed) or 1.0
    fused = dict.fromkeys((item for z in normed.values() for item in z), 0.0)
    # list by list, in the same order and arithmetic as a per-id sum (the same floats, so the same
    # order among near ties), without a generator per id (200 + 200 candidates: 0.145 -> 0.091 ms)
    for name, z in normed.items():
        w = weights.get(name, 1.0) / total
        missing = w * floors[name]
        blind = unscored.get(name, ()) if unscored else ()
        for item in fused:
            got = z.get(item)
            if got is None and item in blind:
                continue
            fused[item] += missing if got is None else w * got
    _made_whole(fused, {n: weights.get(n, 1.0) for n in normed}, unscored)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def lone_scale(coverage: float) -> float:
    """How far a lone keyword hit may stand out, by the share of the query's terms the index holds.

    A lone hit holding the whole query (`0.110.0`) is the answer; one holding the only one of six
    terms the index knows (`vacation days request`: "three working days" in a postmortem, while the
    dense side had the German vacation policy first) is weak evidence. The same ramp as the dense
    share in fusion_weights: coverage / 0.5 below half the terms, whole from half up. Across
    languages too: one name shared by an English question and a Chinese paragraph (z 8.5 among 74)
    outweighed the dense side (xquad-en -> xquad-zh 0.8390 -> 0.8164); a cap of its own there (z 3)
    did no better than this scale on the held halves (issue 44, docs/benchmarks.md).
    """
    return min(1.0, coverage / 0.5)


# A query's dense share falls linearly from LONG_QUERY[0] analysed terms to LONG_QUERY[1], by
# up to LONG_QUERY_CUT of itself. Chosen on scifact train, nfcorpus dev and the Bible dev sets
# (a plateau from 10-14 to 16-24 terms, cut 0.3-0.5; round eleven, in docs/benchmarks.md's history).
LONG_QUERY = (12, 20)
LONG_QUERY_CUT = 0.4


def long_query_share(share: float, terms: int) -> float:
    """The dense share for a query of ``terms`` analysed terms.

    Many terms give BM25 many chances to agree with one passage (a verse quoted in another
    translation, a claim restated), while one vector of the whole query blurs as it grows: on
    the Bible dev sets hybrid fell below keyword alone mostly on queries of 16 terms and more. A
    question gets no share of its own: a larger one (0.65 for e5) cost the held halves as much as
    it gained on XQuAD (issue 44, docs/benchmarks.md).
    """
    lo, hi = LONG_QUERY
    ramp = min(1.0, max(0.0, (terms - lo) / (hi - lo)))
    return share * (1 - LONG_QUERY_CUT * ramp)


def _top_z(ranked: Ranked) -> float:
    """The z-score of a list's first hit among its own candidates (0 for fewer than two, or all
    alike): how far a retriever's best answer stands out, its own sign of confidence."""
    scores = [s for _, s in ranked]
    if len(scores) < 2:
        return 0.0
    mean = sum(scores) / len(scores)
    std = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5
    return (scores[0] - mean) / std if std else 0.0


def keyword_lead(keyword: Ranked, semantic: Ranked) -> float:
    """How far the keyword list's best hit stands out, over how far the dense list's does (>= 1).

    The top hit's z-score among its own candidates is a per-query sign of a retriever's
    confidence. A query whose words pick one passage out clearly (many rare words shared) while
    the dense model sees nothing special is one where BM25 is right and the dense side, off its
    domain, drags it down: the keyword weight is multiplied by this ratio. Only ever towards the
    keyword side: lowering it (dense top stands out) lost on nfcorpus dev (docs/benchmarks.md).
    """
    k, s = _top_z(keyword), _top_z(semantic)
    return k / s if k > s > 0 else 1.0


def fusion_weights(
    settings: SearchSettings, coverage: float, other_language: bool = False, model_weight: float = 0.3
) -> dict[str, float]:
    """Keyword/semantic weights for one query.

    BM25 cannot match across languages: when most top dense hits are in another
    language than the query, or fewer than half of the query's words occur in the
    index at all, the dense side takes over (up to ``semantic_weight_uncovered``).
    On scifact train and nfcorpus dev this changes nothing; English questions over
    German/Chinese XQuAD gain +0.05 to +0.11 nDCG@10, and over Chinese answers
    mixed with English distractors 0.06 -> 0.76 (issue 18's first round; the script that
    measured it is in git history).
    """
    base = model_weight if settings.semantic_weight is None else settings.semantic_weight
    top = max(base, settings.semantic_weight_uncovered)
    if other_language:
        share = top
    elif coverage >= 0.5:
        share = base
    else:
        share = base + (1 - coverage / 0.5) * (top - base)
    return {"keyword": 1 - share, "semantic": share}


def hybrid_weights(
    settings: SearchSettings, lists: dict[str, list[tuple[str, float]]], coverage: float,
    other_language: bool, model_weight: float,
) -> dict[str, float]:  # fmt: skip
    """fusion_weights, then (z-score fusion, same-language covered queries) the keyword lead.

    Without the lead, hybrid fell 0.013 below keyword alone on our Bible paraphrase sets, where
    e5 is weak (bench/make_bible_sets.py, docs/benchmarks.md).
    """
    weights = fusion_weights(settings, coverage, other_language, model_weight)
    if settings.keyword_lead and settings.fusion == "zscore" and not other_language and coverage >= 0.5:
        weights["keyword"] *= keyword_lead(lists.get("keyword", []), lists.get("semantic", []))
    return weights


def fuse_hybrid(
    settings: SearchSettings, lists: dict[str, list[tuple[str, float]]], coverage: float,
    other_language: bool, model_weight: float, unscored: Unscored | None = None,
) -> list[tuple[str, float]]:  # fmt: skip
    """The hybrid ranking of one query's candidate lists, as the searcher makes it (and the tuning
    scripts in bench/ replay it). ``unscored``: per list, the ids it could not rank (chunks still
    without a vector, for the dense side): those are ranked by the other lists alone."""
    weights = hybrid_weights(settings, lists, coverage, other_language, model_weight)
    if settings.fusion == "zscore":
        return zscore_combination(lists, weights, lone_scale(coverage), unscored)
    if settings.fusion == "convex":
        return convex_combination(lists, weights, unscored)
    return weighted_rrf(lists, weights, settings.rrf_k, unscored)
