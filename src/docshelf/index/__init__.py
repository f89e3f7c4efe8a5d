"""Index: keep the store in step with the files (sync, watch, the writer lock, freshness).

Nothing is imported here: ``docshelf.index.stale`` and ``docshelf.index.lock`` are light, while
``docshelf.index.sync`` pulls in the parsers, the chunker and numpy.
"""
