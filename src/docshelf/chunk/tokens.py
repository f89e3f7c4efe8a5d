"""Token counting for the chunker: the protocol a model's tokenizer fills, and a model-free estimate."""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

__all__ = ["ApproxTokenCounter", "TokenCounter"]

# Han, Hangul, kana and their extensions: scripts written without spaces, which an
# embedding tokenizer splits into roughly one token per character.
_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff65-\uffdc\U00020000-\U0003134f"
)
_TOKEN = re.compile(rf"([^\W{_CJK}]+)|[{_CJK}]|[^\w\s]")
_PUNCT_RUN = re.compile(r"([^\w\s])\1{4,}")


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens a model would see for a text."""

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        ...


class ApproxTokenCounter:
    """Model-free estimate: one token per CJK character and per punctuation mark,
    one per four characters of other words and of runs like "-----" (rounded up)."""

    def count(self, text: str) -> int:
        """Estimated tokens in ``text``."""
        n = sum((len(word) + 3) // 4 if word else 1 for word in _TOKEN.findall(text))
        # Tokenizers merge rule lines and table borders; counting each "-" overshoots.
        for m in _PUNCT_RUN.finditer(text):
            size = m.end() - m.start()
            n -= size - (size + 3) // 4
        return n
