"""The keyword analyzer sent to another process: the indexer's parse workers analyse the chunks
they make, so that the indexer's own thread is left to write (on a big first index the analysis
was a third of that thread's time, and the thread set the pace of the keyword-first phase)."""

from __future__ import annotations

import threading
from typing import Any

from docshelf.analyze.analyzer import Analyzer

__all__ = ["PortableAnalyzer"]

_SHARED: dict[tuple[Any, ...], Analyzer] = {}
_LOCK = threading.Lock()


class PortableAnalyzer:
    """An Analyzer as a picklable object. In the process that made it, it is that analyzer;
    unpickled elsewhere, one Analyzer of the same configuration per process."""

    def __init__(self, analyzer: Analyzer) -> None:
        self.args = analyzer.args
        self.fingerprint = analyzer.fingerprint
        self._analyzer: Analyzer | None = analyzer

    def __getstate__(self) -> dict[str, Any]:
        return {"args": self.args, "fingerprint": self.fingerprint}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.args = tuple(state["args"])
        self.fingerprint = str(state["fingerprint"])
        self._analyzer = None

    def get(self) -> Analyzer | None:
        """The analyzer; None where the one built here would not be the same (e.g. a word list
        installed in one process's environment only: its terms would not be the index's)."""
        analyzer = self._analyzer
        if analyzer is None:
            with _LOCK:
                analyzer = _SHARED.get(self.args)
                if analyzer is None:
                    analyzer = _SHARED[self.args] = Analyzer(*self.args)
            self._analyzer = analyzer
        return analyzer if analyzer.fingerprint == self.fingerprint else None
