"""BM25 over pre-analysed terms in tantivy: a derived index, rebuildable from SQLite."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import tantivy

from docshelf.errors import StoreError
from docshelf.store.base import own_alternatives

__all__ = ["KeywordDoc", "KeywordIndex"]

_MARKER = "__generation__"
_TOKENIZER = "docshelf_ws"


@dataclass(frozen=True)
class KeywordDoc:
    """What the keyword index holds for one chunk."""

    chunk_id: str
    doc_id: str
    collection: str
    lifecycle: str
    terms: Sequence[str]


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("chunk_id", stored=True, tokenizer_name="raw")
    builder.add_text_field("doc_id", tokenizer_name="raw")
    builder.add_text_field("collection", tokenizer_name="raw")
    builder.add_text_field("lifecycle", tokenizer_name="raw")
    builder.add_text_field("marker", tokenizer_name="raw")
    builder.add_integer_field("generation", stored=True)
    # Terms come already analysed (stemmed, CJK bigrams) by our Analyzer; tantivy only splits on spaces.
    builder.add_text_field("body", tokenizer_name=_TOKENIZER, index_option="freq")
    return builder.build()


class KeywordIndex:
    """tantivy index at ``path``; one writer per process, opened lazily."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._schema = _schema()
        self._writer: tantivy.IndexWriter | None = None
        self._changed = False  # documents added or deleted through this writer since its last commit
        self._shadow: Path | None = None
        self._index = self._open_read_only() if read_only else self._open()

    def _open(self) -> tantivy.Index:
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            index = tantivy.Index(self._schema, path=str(self.path), reuse=True)
        except ValueError:
            # schema changed between versions or files are damaged: the index is derived, so rebuild
            shutil.rmtree(self.path)
            self.path.mkdir(parents=True)
            index = tantivy.Index(self._schema, path=str(self.path), reuse=True)
        return self._tokenized(index)

    def _tokenized(self, index: tantivy.Index) -> tantivy.Index:
        analyzer = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()
        index.register_tokenizer(_TOKENIZER, analyzer)
        return index

    def _open_read_only(self) -> tantivy.Index:
        """The index as it is, changing nothing. tantivy takes a lock file even to read, so an
        index in a folder we cannot write is read through links to its files from a temporary
        folder (a snapshot: segments another writer adds later are not seen)."""
        if not (self.path / "meta.json").is_file():
            return self._tokenized(tantivy.Index(self._schema))  # none yet: empty, in memory
        try:
            return self._tokenized(tantivy.Index(self._schema, path=str(self.path), reuse=True))
        except ValueError:
            pass
        self._shadow = Path(tempfile.mkdtemp(prefix="docshelf-keyword-"))
        # absolute: a link to "data/keyword/x" would be read from inside the temporary folder
        for item in self.path.absolute().iterdir():
            if item.name not in (".managed.json", ".tantivy-meta.lock", ".tantivy-writer.lock"):
                (self._shadow / item.name).symlink_to(item)
        try:
            return self._tokenized(tantivy.Index(self._schema, path=str(self._shadow), reuse=True))
        except ValueError:
            # damaged: a read-only open cannot reset it, so it reads as missing (the store warns
            # and says that `docshelf index` rebuilds it) and the dense side still answers
            shutil.rmtree(self._shadow, ignore_errors=True)
            self._shadow = None
            return self._tokenized(tantivy.Index(self._schema))

    def _w(self) -> tantivy.IndexWriter:
        if self.read_only:
            raise StoreError(f"the keyword index at {self.path} was opened read-only; it cannot be written")
        if self._writer is None:
            try:
                self._writer = self._index.writer(heap_size=64_000_000, num_threads=1)
            except ValueError as exc:
                raise StoreError(
                    f"another process is writing the keyword index at {self.path}; "
                    "wait for it to finish and retry"
                ) from exc
        return self._writer

    def generation(self) -> int | None:
        """The SQLite generation this index was last committed at (None if never)."""
        self._index.reload()
        searcher = self._index.searcher()
        query = tantivy.Query.term_query(self._schema, "marker", _MARKER)
        hits = searcher.search(query, 1).hits
        if not hits:
            return None
        value = searcher.doc(hits[0][1]).get_first("generation")
        return int(value) if value is not None else None

    def coverage(self, terms: Sequence[str]) -> float:
        """Share of the distinct query terms that occur anywhere in the index (0 when none)."""
        unique = set(terms)
        return len(self.known(terms)) / len(unique) if unique else 0.0

    def known(self, terms: Sequence[str]) -> set[str]:
        """The distinct terms that occur anywhere in the index."""
        searcher = self._index.searcher()
        return {t for t in set(terms) if searcher.doc_freq("body", t) > 0}

    def delete_docs(self, doc_ids: Iterable[str]) -> None:
        writer = self._w()
        try:
            for doc_id in doc_ids:
                self._changed = True
                writer.delete_documents_by_term("doc_id", doc_id)
        except (ValueError, RuntimeError) as exc:
            raise self._write_failed(exc) from exc

    def add(self, docs: Iterable[KeywordDoc]) -> None:
        writer = self._w()
        for doc in docs:
            entry = tantivy.Document(
                chunk_id=doc.chunk_id,
                doc_id=doc.doc_id,
                collection=doc.collection,
                lifecycle=doc.lifecycle,
                body=" ".join(doc.terms),
            )
            self._changed = True
            try:
                writer.add_document(entry)
            except (ValueError, RuntimeError) as exc:
                raise self._write_failed(exc) from exc

    def clear(self) -> None:
        self._w().delete_all_documents()
        self._changed = True

    @property
    def changed(self) -> bool:
        """Whether this process added or deleted documents that are not committed yet."""
        return self._changed

    def commit(self, generation: int) -> None:
        """Commit pending changes together with the generation marker."""
        writer = self._w()
        try:
            writer.delete_documents_by_term("marker", _MARKER)
            writer.add_document(tantivy.Document(marker=_MARKER, generation=generation))
            writer.commit()
        except (ValueError, RuntimeError, OSError) as exc:
            raise self._write_failed(exc) from exc
        self._changed = False
        self._index.reload()

    @property
    def writing(self) -> bool:
        """True while this process holds the tantivy writer (and its lock)."""
        return self._writer is not None

    def compact(self) -> None:
        """Let pending merges finish, then delete files no segment uses any more."""
        self.release()
        writer = self._w()
        writer.garbage_collect_files()
        self.release()
        self._index.reload()

    def close(self) -> None:
        """Release the writer and the index, and remove a read-only open's temporary folder (links
        only)."""
        self.release()
        # the on-disk index's reader reloads on a thread after each commit, taking a lock file in
        # the folder: held past close, it wrote into a folder being deleted (a test's temporary
        # folder: "Directory not empty: 'keyword'" under load)
        self._index = self._tokenized(tantivy.Index(self._schema))
        if self._shadow is not None:
            shutil.rmtree(self._shadow, ignore_errors=True)
            self._shadow = None

    def release(self) -> None:
        """Drop the writer (and its lock) so another process can write."""
        self._changed = False  # a writer dropped uncommitted loses its changes
        if self._writer is not None:
            writer, self._writer = self._writer, None  # dropped even if its threads failed
            try:
                writer.wait_merging_threads()
            except (ValueError, RuntimeError, OSError) as exc:
                raise self._write_failed(exc) from exc

    def _write_failed(self, exc: BaseException) -> StoreError:
        # tantivy reports a full disk as a worker-thread failure; the index is derived, so
        # the next sync rebuilds it from SQLite once it can write again
        self._writer = None
        self._changed = False
        return StoreError(
            f"the keyword index at {self.path} could not be written ({exc}); check free disk space "
            "and permissions, then run `docshelf index` again (it is rebuilt from the database)"
        )

    def search(
        self,
        terms: Sequence[str],
        k: int,
        collections: Sequence[str] = (),
        doc_ids: Sequence[str] | None = None,
        include_superseded: bool = False,
        alternatives: Mapping[str, Sequence[str]] | None = None,
    ) -> list[tuple[str, float]]:
        """BM25 top-k chunk ids for an OR of ``terms`` (duplicates add weight, as in Lucene); a term
        with ``alternatives`` scores the best of its own and theirs (a disjunction max)."""
        if not terms or (doc_ids is not None and not doc_ids):
            return []
        schema = self._schema
        alternatives = own_alternatives(terms, alternatives)

        def clause(term: str) -> tantivy.Query:
            own = tantivy.Query.term_query(schema, "body", term)
            others = [tantivy.Query.term_query(schema, "body", t) for t in alternatives.get(term, ())]
            return tantivy.Query.disjunction_max_query([own, *others]) if others else own

        should = [(tantivy.Occur.Should, clause(t)) for t in terms]
        clauses = [(tantivy.Occur.Must, tantivy.Query.boolean_query(should))]
        # Filters score 0 so the reported score stays the plain BM25 sum.
        if collections:
            in_collections = tantivy.Query.term_set_query(schema, "collection", list(collections))
            clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(in_collections, 0.0)))
        if doc_ids is not None:
            in_docs = tantivy.Query.term_set_query(schema, "doc_id", list(doc_ids))
            clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(in_docs, 0.0)))
        if not include_superseded:
            clauses.append(
                (tantivy.Occur.MustNot, tantivy.Query.term_query(schema, "lifecycle", "superseded"))
            )
        self._index.reload()
        searcher = self._index.searcher()
        result = searcher.search(tantivy.Query.boolean_query(clauses), k)
        out: list[tuple[str, float]] = []
        for score, address in result.hits:
            chunk_id = searcher.doc(address).get_first("chunk_id")
            if chunk_id is not None:
                out.append((str(chunk_id), float(score)))
        return out
