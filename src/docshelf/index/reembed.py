"""Re-embedding a store with another model, resumably: new vectors are kept aside per chunk and
swapped in by one transaction, so the old ones serve searches until then and a re-embed killed
part-way embeds only what it had not done when it runs again."""

from __future__ import annotations

from collections.abc import Callable

from docshelf.embed.base import Embedder
from docshelf.index.ids import embed_key
from docshelf.store.base import Store
from docshelf.types import contextual_text

__all__ = ["reembed_store"]


def reembed_store(
    store: Store, embedder: Embedder, step: int, progress: Callable[[str, int, int], None]
) -> int:
    """Embed every chunk of ``store`` with ``embedder`` (``step`` chunks a batch) and switch the
    recorded model; returns the texts embedded (none for chunks kept aside by an earlier run)."""
    name, dim = embedder.name, embedder.dim
    store.begin_reembed(name, dim)
    titles = {d.id: d.title for d in store.iter_documents()}
    embedded, done, todo = 0, 0, []
    for chunk in store.iter_chunks():
        text = contextual_text(titles.get(chunk.doc_id), chunk.heading_path, chunk.text)
        todo.append((chunk.id, embed_key(name, text), text))
        if len(todo) >= step:
            embedded += _stage(store, embedder, todo)
            done += len(todo)
            progress("reembed", done, 0)
            todo = []
    embedded += _stage(store, embedder, todo)
    store.finish_reembed(name, dim)
    store.commit()
    return embedded


def _stage(store: Store, embedder: Embedder, todo: list[tuple[str, str, str]]) -> int:
    """Embed the chunks of ``todo`` (id, new key, text) not kept aside yet; how many texts."""
    staged = store.staged_keys([cid for cid, _, _ in todo]) if todo else {}
    needed = [(cid, key, text) for cid, key, text in todo if staged.get(cid) != key]
    if not needed:
        return 0
    texts = {key: text for _, key, text in needed}
    vectors = dict(zip(texts, embedder.embed_documents(list(texts.values())), strict=True))
    store.stage_vectors([(cid, key, vectors[key]) for cid, key, _ in needed])
    return len(texts)
