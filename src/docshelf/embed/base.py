"""The Embedder protocol every embedding backend implements."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from docshelf.lazy import numpy as np


__all__ = ["Embedder", "Plausible", "PortableCount", "SaysSlow", "Vectors", "normalize"]

Vectors: TypeAlias = "npt.NDArray[np.float32]"


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors.

    ``name`` is stored in the index: opening an index with an embedder of
    another name or dimension is refused. ``max_tokens`` is the model's real
    input window in its own tokens; the chunker never exceeds it.
    """

    name: str
    dim: int
    max_tokens: int
    fusion_weight: float  # dense share in hybrid search, measured per model on train/dev splits

    def count_tokens(self, text: str) -> int:
        """Tokens the model would see for ``text`` as a passage."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed passages: shape (len(texts), dim)."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """Embed one search query: shape (dim,)."""
        ...


@runtime_checkable
class Plausible(Protocol):
    """An embedder that can say how much a text looks like language to its model (optional)."""

    def plausibility(self, text: str) -> float | None:
        """Mean log-probability per letter under the model's tokenizer; None when it cannot say."""
        ...


@runtime_checkable
class SaysSlow(Protocol):
    """An embedder that can say why it ran slower here than it should (optional): a fallback
    runtime, a rejected quantisation."""

    def slow_note(self) -> str | None:
        """One line for the report of a sync that embedded; None when it ran at full speed."""
        ...


@runtime_checkable
class PortableCount(Protocol):
    """An embedder whose token count can run in another process (optional): the indexer then
    chunks in its parse worker, and its own thread is left to write."""

    def portable_counter(self) -> Callable[[str], int] | None:
        """A picklable function equal to ``count_tokens``; None when there is none now."""
        ...


def normalize(vectors: Vectors) -> Vectors:
    """L2-normalise rows (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vectors = (vectors / norms).astype(np.float32, copy=False)
    return out
