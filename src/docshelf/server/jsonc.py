"""JSON with comments and trailing commas (JSONC, as Cursor and VS Code read it): parse it, and
set one member by a textual edit so the user's comments and layout stay as they were."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["has_comments", "loads", "set_member", "strip"]

_WS = " \t\r\n"
_DECODER = json.JSONDecoder()


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] not in "\r\n":  # line breaks stay: error positions keep their line numbers
            chars[i] = " "


def strip(text: str, commas: bool = True) -> str:
    """``text`` with comments (and, if ``commas``, trailing commas) blanked out; the same length,
    so every offset into it is an offset into ``text``. Raises JSONDecodeError on an unclosed
    comment or string."""
    chars = list(text)
    i, n, comma = 0, len(text), -1
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise json.JSONDecodeError("Unterminated string", text, i)
            i, comma = j + 1, -1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            _blank(chars, i, end)
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise json.JSONDecodeError("Unterminated comment", text, i)
            _blank(chars, i, end + 2)
            i = end + 2
            continue
        if c in "}]" and comma >= 0 and commas:
            chars[comma] = " "
        if c == ",":
            comma = i
        elif c not in _WS:
            comma = -1
        i += 1
    return "".join(chars)


def loads(text: str) -> Any:
    """Parse JSONC; JSONDecodeError (with line and column) when it is not."""
    return json.loads(strip(text))


def has_comments(text: str) -> bool:
    """True when ``text`` holds a comment: a plain JSON rewrite would lose it."""
    return strip(text, commas=False) != text


@dataclass
class _Object:
    close: int  # offset of the closing brace
    members: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # key, value start, end


def _skip(clean: str, i: int) -> int:
    while i < len(clean) and clean[i] in _WS:
        i += 1
    return i


def _object(clean: str, i: int) -> _Object:
    """The members of the (valid, comment-free) object whose ``{`` is at ``i``."""
    obj = _Object(close=-1)
    j = _skip(clean, i + 1)
    while clean[j] != "}":
        key, after = _DECODER.raw_decode(clean, j)
        start = _skip(clean, _skip(clean, after) + 1)  # past the colon
        _, end = _DECODER.raw_decode(clean, start)
        obj.members[key] = (j, start, end)
        j = _skip(clean, end)
        if clean[j] == ",":
            j = _skip(clean, j + 1)
    obj.close = j
    return obj


def _indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    match = re.match(r"[ \t]*", text[start:pos])
    return match.group(0) if match else ""


def _alone(clean: str, pos: int) -> bool:
    """Nothing but blanks before ``pos`` on its line (comments are blanks in ``clean``)."""
    return clean[clean.rfind("\n", 0, pos) + 1 : pos].strip() == ""


def _dump(value: Any, indent: str, unit: str, newline: str) -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", newline + indent)


def _insert(text: str, clean: str, obj: _Object, key: str, value: Any, unit: str, newline: str) -> str:
    """``text`` with ``"key": value`` added as the last member of ``obj``."""
    close_line = text.rfind("\n", 0, obj.close) + 1
    if obj.members and _alone(clean, min(m[0] for m in obj.members.values())):
        member = _indent(text, min(m[0] for m in obj.members.values()))
    else:
        member = _indent(text, obj.close) + unit
    entry = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, member, unit, newline)}"
    if _alone(clean, obj.close):
        at, new = close_line, f"{member}{entry}{newline}"
    else:  # "}" shares its line with the members: the entry gets lines of its own
        at, new = obj.close, f"{newline}{member}{entry}{newline}{_indent(text, obj.close)}"
    text = text[:at] + new + text[at:]
    if obj.members:
        last = max(m[2] for m in obj.members.values())
        commented = strip(text, commas=False)
        if commented[_skip(commented, last)] != ",":  # a trailing comma the user wrote serves
            text = text[:last] + "," + text[last:]
    return text


def set_member(text: str, outer: str, name: str, value: Any) -> str:
    """``text`` (a JSONC object) with ``[outer][name]`` set to ``value`` and nothing else changed;
    ``[outer]`` is created when missing and must be an object when present."""
    clean = strip(text)
    newline = "\r\n" if "\r\n" in text else "\n"
    unit = "\t" if re.search(r"^\t", text, re.M) else "  "
    top = _object(clean, _skip(clean, 0))
    if outer not in top.members:
        return _insert(text, clean, top, outer, {name: value}, unit, newline)
    inner = _object(clean, top.members[outer][1])
    if name not in inner.members:
        return _insert(text, clean, inner, name, value, unit, newline)
    key, start, end = inner.members[name]
    return text[:start] + _dump(value, _indent(text, key), unit, newline) + text[end:]
