"""Result size: token estimates, cursors, and the JSON every tool returns."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from mcp_types import CallToolResult, TextContent

from docshelf.errors import DocshelfError
from docshelf.shelf import estimate_tokens, prefix_within

__all__ = [
    "decode_cursor",
    "dumps",
    "encode_cursor",
    "estimate_tokens",
    "fit_items",
    "json_tokens",
    "prefix_within",
    "tool_result",
]


def dumps(obj: Any) -> str:
    """Compact JSON with UTF-8 text left as is (no \\u escapes: fewer tokens, readable)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


TAIL_TOKENS = 120  # the note and cursor set after the items are fitted


def fit_items(payload: dict[str, Any], key: str, budget: int, shorten: tuple[str, ...] = ()) -> int:
    """Drop items from the end of ``payload[key]`` until the JSON fits; return how many remain.

    When not even the first fits and ``shorten`` names its long text fields, those are cut (and
    ``text_cut`` set) so that one item is kept: a page of none made a cursor that pointed at
    itself, and a client following it looped.
    """
    items: list[Any] = payload[key]
    budget -= TAIL_TOKENS
    base = estimate_tokens(dumps({**payload, key: []}))
    used = base
    for i, item in enumerate(items):
        used += estimate_tokens(dumps(item))
        if used > budget:
            if i == 0 and shorten and isinstance(item, dict):
                _shorten(item, shorten, budget - base)
                del items[1:]
                return 1
            del items[i:]
            return i
    return len(items)


def _shorten(item: dict[str, Any], fields: tuple[str, ...], room: int) -> None:
    present = [f for f in fields if isinstance(item.get(f), str)]
    rest = estimate_tokens(dumps({k: v for k, v in item.items() if k not in present})) + 8
    share = max(16, (room - rest) // max(1, len(present)))
    for name in present:
        text = item[name]
        # JSON escapes (\n, \", \\) cost more than the characters: cut the escaped form to fit
        while text and estimate_tokens(dumps(text)) > share:
            text = text[: max(0, min(len(text) - 1, prefix_within(text, share) * 9 // 10))]
        item[name] = text
    item["text_cut"] = True


def json_tokens(payload: dict[str, Any]) -> int:
    """The estimate for ``payload`` as it is sent (JSON, escapes included)."""
    return estimate_tokens(dumps(payload))


def tool_result(payload: dict[str, Any]) -> CallToolResult:
    """structuredContent plus the same JSON as text, for clients that only read text."""
    return CallToolResult(content=[TextContent(type="text", text=dumps(payload))], structured_content=payload)


def encode_cursor(state: dict[str, Any]) -> str:
    """An opaque cursor; the client passes it back unchanged."""
    return base64.urlsafe_b64encode(dumps(state).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, kind: str) -> dict[str, Any]:
    """Read a cursor made by :func:`encode_cursor` for tool ``kind``; DocshelfError if it is not one."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        state = json.loads(raw)
    except (binascii.Error, ValueError) as exc:
        raise DocshelfError("invalid cursor: pass the next_cursor of the previous result unchanged") from exc
    if not isinstance(state, dict) or state.get("k") != kind:
        raise DocshelfError(f"this cursor is not from {kind}: pass the next_cursor that {kind} returned")
    return state
