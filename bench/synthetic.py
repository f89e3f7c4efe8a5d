"""A synthetic store grown from a real one: copies of its documents with rotated sentences and
slightly perturbed vectors, so text statistics and vector geometry stay realistic at any size."""

from __future__ import annotations

import dataclasses

import numpy as np

from docshelf.embed.base import normalize
from docshelf.store.base import Replacement, Store


def grow(base: Store, target: Store, dim: int, chunks: int, seed: int = 7, tag: str = "") -> int:
    """Write copies of ``base``'s documents into ``target`` until ``chunks`` chunks are written
    (``tag`` keeps the copies of several bases apart)."""
    docs = list(base.iter_documents())
    by_doc = {d.id: base.document_chunks(d.id) for d in docs}
    vectors = base.cached_vectors([c.embed_key for cs in by_doc.values() for c in cs])
    rng = np.random.default_rng(seed)
    total, copy = 0, 0
    while total < chunks:
        for doc in docs:
            if total >= chunks:
                break
            new_doc = dataclasses.replace(doc, id=f"{doc.id}-{tag}{copy}", collection="scale",
                                          path=f"copy{tag}{copy}/{doc.path}")  # fmt: skip
            new_chunks, new_vecs = [], {}
            for c in by_doc[doc.id]:
                sentences = c.text.split(". ")
                shift = copy % max(1, len(sentences))
                text = ". ".join(sentences[shift:] + sentences[:shift]) if copy else c.text
                vec = vectors[c.embed_key] + rng.normal(0, 0.02, dim).astype(np.float32)
                key = f"{c.embed_key}-{tag}{copy}"
                new_vecs[key] = normalize(vec[None, :])[0]
                new_chunks.append(dataclasses.replace(c, id=f"{c.id}-{tag}{copy}", doc_id=new_doc.id,
                                                      text=text, embed_key=key))  # fmt: skip
            target.replace_documents([Replacement(new_doc, new_chunks, new_vecs)])
            total += len(new_chunks)
        copy += 1
    return total
