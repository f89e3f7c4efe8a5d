"""Result size: token estimates, cursors, and the JSON every tool returns."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from mcp_types import CallToolResult, TextContent

from docshelf.errors import DocshelfError
from docshelf.shelf.budget import estimate_tokens, prefix_within

__all__ = [
    "decode_cursor",
    "dumps",
    "encode_cursor",
    "estimate_tokens",
    "fit_items",
    "prefix_within",
    "tool_result",
]


def dumps(obj: Any) -> str:
    """Compact JSON with UTF-8 text left as is (no \\u escapes: fewer tokens, readable)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


def fit_items(payload: dict[str, Any], key: str, budget: int) -> int:
    """Drop items from the end of ``payload[key]`` until the JSON fits; return how many remain."""
    items: list[Any] = payload[key]
    base = estimate_tokens(dumps({**payload, key: []}))
    used = base
    for i, item in enumerate(items):
        used += estimate_tokens(dumps(item))
        if used > budget:
            del items[i:]
            return i
    return len(items)


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
