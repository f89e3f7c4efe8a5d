"""Sources: find the files under corpus roots.

The walker (and pathspec) loads on first use: a search's freshness check needs only
``docshelf.sources.names``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docshelf.sources.names import is_within
    from docshelf.sources.walk import WalkResult, resolve_root, walk_roots

__all__ = ["WalkResult", "is_within", "resolve_root", "walk_roots"]


def __getattr__(name: str) -> Any:
    if name == "is_within":
        from docshelf.sources.names import is_within

        return is_within
    if name in __all__:
        from docshelf.sources import walk

        return getattr(walk, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
