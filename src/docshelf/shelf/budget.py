"""Token estimates for cutting text to a budget (the MCP result cap, `read --max-tokens`)."""

from __future__ import annotations

__all__ = ["estimate_tokens", "prefix_within"]


def estimate_tokens(text: str) -> int:
    """A cautious token count: ~4 ASCII characters per token, one token per other character.

    CJK text really is about one token per character, so counting characters alone would
    let a Chinese document blow through the cap four times over.
    """
    ascii_chars = len(text.encode("ascii", "ignore"))
    return ascii_chars // 4 + (len(text) - ascii_chars) + 1


def prefix_within(text: str, budget: int) -> int:
    """Length of the longest prefix of ``text`` whose estimate stays within ``budget`` tokens."""
    if estimate_tokens(text) <= budget:
        return len(text)
    cost = 0.0
    for i, ch in enumerate(text):
        cost += 0.25 if ord(ch) < 128 else 1.0
        if cost > budget:
            return i
    return len(text)
