"""Search: hybrid retrieval over a store, plus evaluation."""

from docshelf.search.fusion import convex_combination, weighted_rrf
from docshelf.search.searcher import Hit, Mode, Searcher, SearchResult

__all__ = ["Hit", "Mode", "SearchResult", "Searcher", "convex_combination", "weighted_rrf"]
