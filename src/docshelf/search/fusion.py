"""Fusing ranked lists from the keyword and dense retrievers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["convex_combination", "weighted_rrf"]

Ranked = Sequence[tuple[str, float]]


def weighted_rrf(
    lists: Mapping[str, Ranked], weights: Mapping[str, float], k: int = 60
) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: sum of weight / (k + rank) over the lists an id appears in."""
    fused: dict[str, float] = {}
    for name, ranked in lists.items():
        w = weights.get(name, 1.0)
        for rank, (item, _) in enumerate(ranked, start=1):
            fused[item] = fused.get(item, 0.0) + w / (k + rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def convex_combination(lists: Mapping[str, Ranked], weights: Mapping[str, float]) -> list[tuple[str, float]]:
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
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
