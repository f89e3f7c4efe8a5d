"""Hybrid search: keyword (BM25) and dense retrieval, fused, with citations and snippets."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ThreadPoolExecutor

from docshelf.analyze import Analyzer
from docshelf.analyze.language import same_language
from docshelf.analyze.scripts import decode_scripts, known_scripts, scripts_of
from docshelf.config import SearchSettings
from docshelf.embed.base import Embedder, Plausible, Vectors
from docshelf.search.accents import accent_alternatives
from docshelf.search.confidence import (
    NEAREST_NOTE,
    NEAREST_TOP,
    UNREADABLE,
    UNREADABLE_NOTE,
    Evidence,
    VectorCounts,
    confidence,
    coverage_note,
    in_order,
    nearest_neighbours,
    telling,
    vector_counts,
)
from docshelf.search.corpus_languages import CorpusLanguages
from docshelf.search.feedback import FEEDBACK_HITS, applies, moved
from docshelf.search.fusion import fuse_hybrid, long_query_share
from docshelf.search.hitterms import HitTerms
from docshelf.search.hydrate import Asked, Reads, hydrate
from docshelf.search.lru import Lru
from docshelf.search.respell import respelled
from docshelf.search.results import Hit, SearchResult
from docshelf.store.base import PendingVector, SearchFilter, Store, ready_vector
from docshelf.types import Mode

__all__ = ["Hit", "Mode", "SearchResult", "Searcher"]

_EMBED_POOL: ThreadPoolExecutor | None = None
_EMBED_POOL_LOCK = threading.Lock()


def _embed_pool() -> ThreadPoolExecutor:
    """Threads that embed queries while the keyword side searches (made on first use). Its
    tasks never wait on other tasks, so one small pool serves any number of searches."""
    global _EMBED_POOL
    with _EMBED_POOL_LOCK:
        if _EMBED_POOL is None:
            _EMBED_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="docshelf-embed")
        return _EMBED_POOL


STOPWORDS_NOTE = (
    "the query has only common words (no keyword to match): these are its nearest neighbours by "
    "meaning and may be unrelated; add a specific word"
)


class Searcher:
    """Answers queries against one store."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        analyzer: Analyzer,
        settings: SearchSettings,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.analyzer = analyzer
        self.settings = settings
        self.hit_terms = HitTerms(analyzer)
        self._vectors = Lru(256)  # query -> vector (1.5 KB each for e5)
        self.corpus_languages = CorpusLanguages(store, analyzer)

    def search(
        self,
        query: str,
        k: int | None = None,
        mode: Mode | None = None,
        flt: SearchFilter | None = None,
        snippets: bool = True,
        counted: VectorCounts | None = None,
    ) -> SearchResult:
        """The top ``k`` hits for ``query``, each with its citation, snippet, matched words and a
        calibrated confidence. The steps, in order (each rule's reasons are where it lives):

        1. The query is analysed as the passages were (analyze/), with the stems of the index's
           main languages added when its own language cannot be told (corpus_languages.py).
        2. A query word no passage holds is tried in the index's other languages (respell.py); a
           query whose words are all found keeps its terms. An accented word also meets pages
           written without accents, in the keyword retrieval only (accents.py).
        3. The keyword side (BM25 over those terms) and the dense side (the query's vector,
           embedded on a helper thread while the keyword side runs, and kept for repeats,
           ``_embed``) each return ``search.candidates`` chunks (``k`` when more); filters apply
           inside both (the store).
        4. Hybrid mode fuses the two lists (``_fuse``, fusion.py): z-scores mixed with the model's
           dense share, less for a long query, most when the query is in
           another language or most of its words are nowhere in the index; a keyword list whose
           top hit stands out gets more weight; a lone keyword hit counts by the query's coverage.
        5. In hybrid mode a short statement searches the dense side again with its vector moved
           towards its first fused hits, and is fused again (feedback.py, ``_with_feedback``).
        6. The top hits are read and analysed for snippets and matched words (hydrate.py); a
           chunk that is only a heading goes after the chunks with text (headings.py), and a
           passage found word for word in several places is one hit (``also_in``).
        7. Each hit gets a confidence from the retrievers' evidence (``_calibrate``), and the result
           a note when the top hits share no word with the query (``_nearest_note``) or, when
           there are none, one that says why (``_why_empty``).
        """
        started = time.perf_counter()
        k = k or self.settings.k
        mode = mode or self.settings.mode
        flt = flt or SearchFilter()
        if mode != "keyword" and self.embedder is None:
            mode = "keyword"
        also = self.corpus_languages() if self.analyzer.detect else ()
        qtokens = self.analyzer.tokens(query, also)
        if mode != "semantic":
            every = self.corpus_languages.every() if self.analyzer.detect else ()
            qtokens = respelled(self.analyzer, query, qtokens, also, every, self.store.known_terms)
        terms = [t.term for t in qtokens]
        alternatives = accent_alternatives(self.analyzer, query, qtokens, also) if mode != "semantic" else {}
        n = max(self.settings.candidates, k)
        vec: Vectors | PendingVector | None = None
        reads = Reads(self.store)
        # a query of punctuation alone ("?!") embeds to a vector near everything: it finds nothing
        if mode in ("hybrid", "semantic") and self.embedder is not None and any(ch.isalnum() for ch in query):
            vec = self._vectors.peek(query)
            if vec is None and mode == "hybrid" and self.settings.parallel_query:
                # onnxruntime lets go of the interpreter while it runs, so the embedding overlaps
                # the keyword search on two cores (1M chunks, MCP: hybrid p50 62.9 -> 52.0 ms)
                vec = self._pending(_embed_pool().submit(self._embed, query), k, reads)
            elif vec is None:
                vec = self._embed(query)
        # one call (one SQL round trip on PostgreSQL) for both retrievers and the term coverage
        lists, coverage = self.store.candidates(
            terms, vec, n, flt, keyword=mode in ("hybrid", "keyword"), coverage=mode != "semantic",
            alternatives=alternatives,
        )  # fmt: skip
        unembedded, covers = self._unembedded(lists, flt, counted) if "semantic" in lists else (set(), None)
        fused = self._fuse(lists, mode, query, len(terms), coverage, reads, unembedded)
        feedback = mode == "hybrid" and self.settings.dense_feedback and applies(query, len(terms), coverage)
        if feedback and vec is not None:
            again = self._with_feedback(ready_vector(vec), fused, lists, n, flt, reads)
            if again:
                fused = self._fuse(again, mode, query, len(terms), coverage, reads, unembedded)
        hits, shares = hydrate(
            self.store, self.hit_terms, fused, lists, Asked(query, qtokens, alternatives),
            k, snippets, reads, self.settings.collapse_duplicates,
        )  # fmt: skip
        self._calibrate(hits, shares, lists, mode, coverage, unembedded)
        note = self._nearest_note(query, terms, hits) if hits else self._why_empty(terms, flt)
        note = "; ".join(n for n in (note, covers) if n) or None
        # index_age and stale_documents: the shelf stamps them (one freshness tracker per process)
        return SearchResult(query, mode, hits, (time.perf_counter() - started) * 1000, note)

    def _unembedded(
        self, lists: dict[str, list[tuple[str, float]]], flt: SearchFilter, counted: VectorCounts | None
    ) -> tuple[set[str], str | None]:
        """While a sync's vectors are still being computed: the keyword hits the dense side could
        not rank (no vector yet: fused by keyword alone, not counted against), and the note that
        says how much of the index semantic search covers so far. One cheap count otherwise."""
        missing, total = counted or vector_counts(self.store, flt.collections)
        if not missing:
            return set(), None
        ranked = {cid for cid, _ in lists["semantic"]}
        unembedded = self.store.without_vectors([c for c, _ in lists.get("keyword", ())]) - ranked
        return unembedded, coverage_note(missing, total)

    def _embed(self, query: str) -> Vectors:
        """The query's vector, kept: an agent pages through one query's hits (each page searches
        again) and narrows it with filters, and a repeated query skips the model (~6 ms)."""
        assert self.embedder is not None
        vec = self.embedder.embed_query(query)
        vec.setflags(write=False)  # shared by the searches that repeat the query
        self._vectors.put(query, vec)
        return vec

    def _with_feedback(
        self, vec: Vectors | None, fused: list[tuple[str, float]], lists: dict[str, list[tuple[str, float]]],
        n: int, flt: SearchFilter, reads: Reads,
    ) -> dict[str, list[tuple[str, float]]] | None:  # fmt: skip
        """The lists to fuse again: the dense side searched with the query's vector moved towards
        the first fused hits' (feedback.py); None when there is nothing to move it by. The hits keep
        the first dense list's ranks and cosines as evidence: the confidence was fitted on those."""
        keys = [c.embed_key for c in reads.chunks([cid for cid, _ in fused[:FEEDBACK_HITS]])]
        stored = self.store.cached_vectors(keys) if vec is not None and keys else {}
        target = moved(vec, [stored[key] for key in keys if key in stored]) if vec is not None else None
        if target is None:
            return None
        return {**lists, "semantic": self.store.vector_search(target, n, flt)}

    def _pending(self, future: Future[Vectors], k: int, reads: Reads) -> PendingVector:
        """The vector being computed; while the store waits for it, the first ``k`` keyword hits
        are analysed for their snippets (hitterms.py), one by one until it is ready: the main
        thread would only wait (a query embeds in ~6 ms, the keyword side takes ~2.5 at 100k)."""

        def wait(keyword_hits: Sequence[tuple[str, float]] = ()) -> Vectors:
            if keyword_hits and not future.done():
                order = {cid: rank for rank, (cid, _) in enumerate(keyword_hits[:k])}
                for chunk in reads.chunks(list(order)):
                    if future.done():
                        break
                    self.hit_terms.tokens(chunk.text)
            return future.result()

        return wait

    def _fuse(
        self, lists: dict[str, list[tuple[str, float]]], mode: str, query: str, terms: int, coverage: float,
        reads: Reads, unembedded: AbstractSet[str] = frozenset(),
    ) -> list[tuple[str, float]]:  # fmt: skip
        """One ranking from the candidate lists: a single mode's own list as it is; in hybrid mode
        both fused (fuse_hybrid) with this query's dense share and the other-language flag, the
        ``unembedded`` chunks (no vector yet) by keyword alone."""
        if mode != "hybrid":
            return next(iter(lists.values()), [])
        other = self.other_language(query, lists, reads)
        weight = self._model_weight(terms)
        return fuse_hybrid(self.settings, lists, coverage, other, weight, {"semantic": unembedded})

    def _model_weight(self, terms: int) -> float:
        """The embedder's dense share for a query of ``terms`` analysed terms (less for a long one)."""
        return 0.0 if self.embedder is None else long_query_share(self.embedder.fusion_weight, terms)

    def other_language(
        self, query: str, lists: dict[str, list[tuple[str, float]]], reads: Reads | None = None
    ) -> bool:
        """True when most of the top three dense hits are in another language or script than the
        query: keywords cannot match across languages, so the fusion then trusts the dense side
        (fusion_weights, lone_scale). A language the stop-word vote cannot tell (a few keywords)
        differs from none in its script. ``reads``: one search's chunk reads, shared with its hits;
        bench/tune_dense_prf.py asks without, to record the flag a search would fuse with.
        """
        reads = reads or Reads(self.store)
        top = [cid for cid, _ in lists.get("semantic", [])[:3]]
        if len(top) < 2:
            return False
        mine = self.hit_terms.language(query)  # one vote per query, kept
        others = sum(not same_language(mine, self.hit_terms.language(c.text)) for c in reads.chunks(top))
        return others * 2 > len(top)

    def _calibrate(
        self, hits: list[Hit], shares: list[float], lists: dict[str, list[tuple[str, float]]], mode: str,
        coverage: float, unembedded: AbstractSet[str] = frozenset(),
    ) -> None:  # fmt: skip
        """Each hit's confidence from the evidence the retrievers gave, never above the hit
        before it's (search/confidence.py, ``in_order``); a hit without a vector yet by the keyword
        fit (no dense evidence is not evidence against)."""
        cosine = dict(lists.get("semantic", []))
        model = self.embedder.name if self.embedder is not None else "*"
        evidence = [
            Evidence(
                term_share=share, keyword_rank=hit.ranks.get("keyword"),
                semantic_rank=hit.ranks.get("semantic"), semantic_score=cosine.get(hit.chunk_id),
                position=position, coverage=coverage,
            )
            for position, (hit, share) in enumerate(zip(hits, shares, strict=True), start=1)
        ]  # fmt: skip
        fits = ["keyword" if hit.chunk_id in unembedded else mode for hit in hits]
        ordered = in_order([confidence(e, model, fit) for e, fit in zip(evidence, fits, strict=True)])
        for hit, e, value in zip(hits, evidence, ordered, strict=True):
            hit.evidence, hit.confidence = e, value

    def _nearest_note(self, query: str, terms: list[str], hits: list[Hit]) -> str | None:
        """The note for top hits that share no word with the query (see nearest_neighbours)."""
        top = hits[:NEAREST_TOP]
        if not terms:  # only stop words: meaning alone found these
            return STOPWORDS_NOTE
        mine = self.hit_terms.language(query)  # one vote per query, kept
        # a query of no told language: the words could be function words of any it may be in
        langs = [mine] if mine != "alphabetic" else [*self.analyzer.languages, *self.corpus_languages()]
        matched = [telling(h.matched, langs) for h in top]
        if any(matched):
            return None
        if self._unreadable(query):
            return UNREADABLE_NOTE
        recorded = decode_scripts(self.store.get_meta("scripts"))  # written as the index is built
        scripts = known_scripts(recorded) if recorded else scripts_of(h.text for h in hits)
        same = [same_language(mine, self.hit_terms.language(h.text)) for h in top]
        return NEAREST_NOTE if nearest_neighbours(terms, matched, same, scripts) else None

    def _unreadable(self, query: str) -> bool:
        """True when the query reads as no language to the embedding model (random ideographs, a
        script it never saw): its nearest neighbours are no evidence of anything, even across
        languages, where a query the index cannot match by its words is otherwise given the
        benefit of the doubt (confidence.UNREADABLE says where the line is and why)."""
        score = self.embedder.plausibility(query) if isinstance(self.embedder, Plausible) else None
        return score is not None and score < UNREADABLE

    def _why_empty(self, terms: list[str], flt: SearchFilter) -> str:
        """What to tell a user or an agent when nothing was found, most specific first: an empty
        index, a collection with no documents, filters that match no document, a query of stop
        words only, a keyword index behind its database (an index run was killed), and only then
        "nothing matched". Each says what to do next, since "no results" alone invites a retry of
        the same search."""
        stats = self.store.stats()
        if stats.chunks == 0:
            return "the index is empty: run `docshelf index PATH` first"
        if flt.collections and not any(stats.collections.get(c, {}).get("chunks") for c in flt.collections):
            return f"collection(s) {', '.join(flt.collections)} hold no documents"
        if flt.needs_doc_ids() and not self.store.filter_doc_ids(flt):
            return "no document matches the filters (path, tags, type): widen them"
        if not terms:
            return "the query has no searchable words (only stop words or punctuation?)"
        if stats.keyword_generation is not None and stats.keyword_generation != stats.generation:
            # a sync stopped between its database commit and its keyword commit (killed): keyword
            # search answers from the older keyword index until the next `docshelf index`
            return (
                "no passage matched, but the keyword index is behind the database (an index run was "
                "stopped): run `docshelf index` to bring it up to date, or try mode=semantic"
            )
        return "no passage matched; try other words or mode=semantic"
