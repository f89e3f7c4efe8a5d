"""Path-traversal probes against a running MCP server; shared by test_access.py and the bench."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.shared.exceptions import MCPError

__all__ = ["PROBES", "RESOURCE_PROBES", "probe_all"]

# Ways to name a file outside the corpus (the secret sits next to the corpus root, as
# ../secret.md of it; /etc/passwd is anywhere).
PROBES = [
    "../secret.md",
    "runbooks/../../secret.md",
    "./../secret.md",
    "runbooks/./../../secret.md",
    "....//secret.md",
    "/etc/passwd",
    "//etc/passwd",
    "~/../../etc/passwd",
    "~root/.bashrc",
    "%2e%2e/secret.md",
    "%2E%2E%2Fsecret.md",
    "%252e%252e/secret.md",
    "..%2fsecret.md",
    "..%5csecret.md",
    "runbooks%2f..%2f..%2fsecret.md",
    "..\\secret.md",
    "runbooks\\..\\..\\secret.md",
    "C:\\Windows\\win.ini",
    "C:/Windows/win.ini",
    "\\\\server\\share\\secret.md",
    "\\\\?\\C:\\secret.md",
    "file:///etc/passwd",
    "secret.md\x00.md",
    "．．/secret.md",
    "docshelf://test/../secret.md",
    "docshelf://test/%2e%2e/secret.md",
    "docshelf://test/runbooks/%2E%2E/%2E%2E/secret.md",
    "docshelf://other/../../secret.md",
]
RESOURCE_PROBES = [
    "docshelf://test/../secret.md",
    "docshelf://test/%2e%2e/secret.md",
    "docshelf://test/%252e%252e/secret.md",
    "docshelf://test/runbooks/..%2f..%2fsecret.md",
    "docshelf://test/..%5csecret.md",
    "docshelf://test//etc/passwd",
    "docshelf://test/%2fetc%2fpasswd",
    "docshelf://test/C:%5CWindows%5Cwin.ini",
    "docshelf://..%2f..%2fetc/passwd",
]


def _text(result: Any) -> str:
    parts = getattr(result, "content", None) or getattr(result, "contents", [])
    return " ".join(getattr(c, "text", "") for c in parts)


async def probe_all(client: Client, secrets: list[str]) -> list[tuple[str, str]]:
    """(probe, what happened) for every probe that was NOT cleanly refused: escapes and crashes."""
    bad: list[tuple[str, str]] = []
    for probe in PROBES:
        for tool, args in (("read_document", {"document": probe}), ("forget", {"document": probe})):
            try:
                result = await client.call_tool(tool, args)
            except MCPError as exc:  # a protocol error is a refusal too, unless it leaks
                if any(s in str(exc) for s in secrets):
                    bad.append((f"{tool} {probe!r}", "secret in the error"))
                continue
            text = _text(result)
            if any(s in text for s in secrets):
                bad.append((f"{tool} {probe!r}", "secret text returned"))
            elif not result.is_error:
                bad.append((f"{tool} {probe!r}", "accepted"))
    for uri in RESOURCE_PROBES:
        try:
            read = await client.read_resource(uri)
        except MCPError as exc:
            if any(s in str(exc) for s in secrets):
                bad.append((uri, "secret in the error"))
            continue
        bad.append((uri, "secret text returned" if any(s in _text(read) for s in secrets) else "accepted"))
    return bad
