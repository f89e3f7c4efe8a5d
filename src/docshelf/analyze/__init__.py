"""Keyword analysis for BM25: the same terms on the index and the query side."""

from __future__ import annotations

from docshelf.analyze.analyzer import ANALYZER_VERSION, Analyzer, Token

__all__ = ["ANALYZER_VERSION", "Analyzer", "Token"]
