"""Helpers for tests that call tools through an MCP client."""

from __future__ import annotations

import json
from typing import Any

from mcp_types import CallToolResult


def data(result: CallToolResult) -> dict[str, Any]:
    """structuredContent, checked to equal the JSON text block."""
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == result.structured_content
    assert "\\u" not in text  # UTF-8, not escapes
    out: dict[str, Any] | None = result.structured_content
    assert out is not None
    return out


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    return str(result.content[0].text)  # type: ignore[union-attr]
