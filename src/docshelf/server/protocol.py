"""Protocol hygiene the SDK leaves to servers: plain argument errors and the right error codes.

- A tool called with bad arguments answers one sentence naming the argument and what it accepts
  (the SDK's text is pydantic's, with a documentation link the model cannot use).
- `prompts/get` of an unknown prompt, or with missing or unknown arguments, is JSON-RPC -32602
  (invalid params), not the generic error the SDK gives a raised ValueError.
- `tools/call` of an unknown tool is -32602 too (the spec's protocol error; the SDK answers an
  isError result), saying why a write tool or `ask_question` is missing.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    GetPromptRequestParams,
    TextContent,
)
from pydantic import ValidationError

__all__ = ["argument_problem", "install_protocol_fixes", "slim_schema", "unknown_tool"]

# tools that exist only with some settings, and what turns them on
_READ_ONLY = "this server is read-only (start `docshelf serve` without --read-only to write)"
_SWITCHED = {
    "ingest": _READ_ONLY,
    "forget": _READ_ONLY,
    "reindex": _READ_ONLY,
    "ask_question": "no LLM is configured (set answer.model in docshelf.toml)",
}


def _allowed(spec: dict[str, Any]) -> str:
    """What a JSON-schema property accepts, in words."""
    options = spec.get("anyOf") or [spec]
    words: list[str] = []
    for option in options:
        kind = option.get("type")
        if "enum" in option:
            words.append("one of " + ", ".join(repr(v) for v in option["enum"]))
        elif kind == "integer" or kind == "number":
            lo, hi = option.get("minimum"), option.get("maximum")
            noun = "an integer" if kind == "integer" else "a number"
            if lo is not None and hi is not None:
                words.append(f"{noun} from {lo} to {hi}")
            elif lo is not None:
                words.append(f"{noun} of at least {lo}")
            else:
                words.append(noun)
        elif kind == "string":
            lo, hi = option.get("minLength"), option.get("maxLength")
            size = f" of {lo} to {hi} characters" if lo and hi else " (not empty)" if lo else ""
            words.append("a string" + size)
        elif kind == "array":
            words.append(
                "a list" + (" of strings" if option.get("items", {}).get("type") == "string" else "")
            )
        elif kind == "boolean":
            words.append("true or false")
        elif kind == "null":
            words.append("null (or leave it out)")
    return " or ".join(words) or "a valid value"


def argument_problem(tool_name: str, schema: dict[str, Any], exc: ValidationError) -> str:
    """One plain sentence for the first thing wrong with a tool call's arguments."""
    props: dict[str, Any] = schema.get("properties", {})
    error = exc.errors()[0]
    name = str(error["loc"][0]) if error["loc"] else "arguments"
    if error["type"] == "missing":
        return f"{tool_name}: argument {name!r} is required; pass {_allowed(props.get(name, {}))}."
    if name not in props:
        known = ", ".join(sorted(props)) or "none"
        return f"{tool_name}: there is no argument {name!r}; the arguments are {known}."
    got = error.get("input")
    shown = repr(got) if isinstance(got, str | int | float | bool) or got is None else type(got).__name__
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return f"{tool_name}: argument {name!r} cannot be {shown}; pass {_allowed(props[name])}."


def slim_schema(schema: Any) -> Any:
    """The same JSON schema with fewer tokens (in place): pydantic's generated titles, ``default:
    null`` and ``additionalProperties: true`` go, ``anyOf [X, null]`` becomes ``type: [X, "null"]``.
    Every tool's schemas are sent with each `tools/list`, into the model's context."""
    if isinstance(schema, list):
        return [slim_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    for key in [k for k, v in schema.items() if k == "title" and isinstance(v, str)]:
        del schema[key]
    if schema.get("additionalProperties") is True:
        del schema["additionalProperties"]
    if "default" in schema and schema["default"] is None:
        del schema["default"]
    options = schema.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = next(o for o in options if o != {"type": "null"})
        if isinstance(other, dict) and isinstance(other.get("type"), str):
            del schema["anyOf"]
            schema.update({**other, "type": [other["type"], "null"]})
    for key, value in list(schema.items()):
        if key == "properties" and isinstance(value, dict):
            for prop in value.values():
                slim_schema(prop)
        elif isinstance(value, dict | list):
            slim_schema(value)
    return schema


def unknown_tool(name: str, tools: list[str]) -> str:
    """One line for a call of a tool this server does not have."""
    shown = name if len(name) <= 60 else name[:57] + "..."
    what = f"tool {shown!r} is off: {_SWITCHED[name]}" if name in _SWITCHED else f"there is no tool {shown!r}"
    return f"{what}; the tools are {', '.join(tools)}"


def install_protocol_fixes(server: MCPServer) -> None:
    """Wrap `tools/call` (unknown tools, argument errors) and `prompts/get` (error codes) of
    ``server``; slim the published tool schemas."""
    for listed in server._tool_manager.list_tools():
        slim_schema(listed.parameters)
        slim_schema(listed.fn_metadata.output_schema)
    low = server._lowlevel_server
    call_entry = low.get_request_handler("tools/call")
    prompt_entry = low.get_request_handler("prompts/get")
    assert call_entry is not None and prompt_entry is not None
    call_tool, get_prompt = call_entry.handler, prompt_entry.handler

    async def checked_call(ctx: Any, params: CallToolRequestParams) -> Any:
        tool = server._tool_manager.get_tool(params.name)
        if tool is None:
            names = [t.name for t in server._tool_manager.list_tools()]
            raise MCPError(code=INVALID_PARAMS, message=unknown_tool(params.name, names))
        try:
            tool.fn_metadata.validate_arguments(params.arguments or {})
        except ValidationError as exc:
            text = argument_problem(params.name, tool.parameters, exc)
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        return await call_tool(ctx, params)

    async def checked_prompt(ctx: Any, params: GetPromptRequestParams) -> Any:
        prompt = server._prompt_manager.get_prompt(params.name)
        if prompt is None:
            names = ", ".join(p.name for p in server._prompt_manager.list_prompts()) or "none"
            raise MCPError(code=INVALID_PARAMS, message=f"unknown prompt {params.name!r}; prompts: {names}")
        given = params.arguments or {}
        declared = {a.name: a for a in prompt.arguments or []}
        missing = [n for n, a in declared.items() if a.required and n not in given]
        unknown = [n for n in given if n not in declared]
        if missing or unknown:
            what = f"missing argument {missing[0]!r}" if missing else f"unknown argument {unknown[0]!r}"
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"prompt {params.name!r}: {what}; its arguments are {', '.join(declared) or 'none'}",
            )
        return await get_prompt(ctx, params)

    low.add_request_handler("tools/call", CallToolRequestParams, checked_call)
    low.add_request_handler("prompts/get", GetPromptRequestParams, checked_prompt)
