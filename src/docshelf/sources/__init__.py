"""Sources: find the files under corpus roots."""

from docshelf.sources.walk import WalkResult, is_within, resolve_root, walk_roots

__all__ = ["WalkResult", "is_within", "resolve_root", "walk_roots"]
