"""YAML frontmatter: a ``---`` first line, YAML, then a ``---`` or ``...`` line."""

from __future__ import annotations

import re
from typing import Any

import yaml

from docshelf.errors import ParseError

__all__ = ["split_frontmatter"]

_OPEN = re.compile(r"---[ \t]*(?:\r\n|\r|\n)")
# Lookbehind rather than MULTILINE ``^``, which ignores lone-CR line ends.
_CLOSE = re.compile(r"(?<=[\r\n])(?:---|\.\.\.)[ \t]*(?:\r\n|\r|\n|\Z)")
_FIX = "fix the YAML between the '---' lines or remove the frontmatter"
_MAX_VALUES = 10_000  # keys and values of the expanded metadata; real frontmatter has dozens
_MAX_BYTES = 256 * 1024


def split_frontmatter(text: str, path: str) -> tuple[dict[str, Any], int]:
    """Return (metadata, body_start); ({}, 0) when ``text`` has no frontmatter.

    An opening ``---`` without a closing line is not frontmatter (it is a
    thematic break), so such files keep all their text. Raises ParseError for
    malformed YAML (naming the file line) and for YAML that is not a mapping.
    """
    opening = _OPEN.match(text)
    if opening is None:
        return {}, 0
    yaml_start = opening.end()
    closing = _CLOSE.search(text, yaml_start)
    if closing is None:
        return {}, 0
    source = text[yaml_start : closing.start()]
    _check_size(source, path)
    try:
        data = yaml.safe_load(source)
    except yaml.MarkedYAMLError as exc:
        # +2: mark lines are 0-based and the YAML starts on the file's second line.
        mark, context = exc.problem_mark, exc.context_mark
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = exc.problem or "invalid YAML"
        if exc.context and context is not None and (mark is None or context.line != mark.line):
            # An unclosed bracket is noticed lines later; its opening line is the useful one.
            problem += f" ({exc.context} started at line {context.line + 2})"
        raise ParseError(f"{path}: malformed frontmatter{where}: {problem}; {_FIX}") from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        # PyYAML raises plain ValueError for impossible dates such as 2024-13-45.
        raise ParseError(f"{path}: malformed frontmatter: {exc}; {_FIX}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ParseError(
            f"{path}: frontmatter is a YAML {type(data).__name__}, not a mapping of "
            f"'key: value' lines; {_FIX}"
        )
    _check_shape(data, path)
    return {str(k): v for k, v in data.items()}, closing.end()


def _check_size(source: str, path: str) -> None:
    """ParseError for frontmatter too big to keep, before YAML spends minutes parsing it: every
    value but the first needs a line break or a comma, so their count bounds the values."""
    values = source.count("\n") + source.count(",") + 1
    if len(source) > _MAX_BYTES or values > _MAX_VALUES:
        raise ParseError(
            f"{path}: frontmatter of {len(source):,} characters holds up to {values:,} values "
            f"(over {_MAX_VALUES:,} values or {_MAX_BYTES // 1024} KB); {_FIX}"
        )


def _check_shape(data: Any, path: str) -> None:
    """ParseError for frontmatter that refers to itself or expands past ``_MAX_VALUES`` values.

    The metadata is stored as JSON, which expands every YAML alias: a recursive alias would
    crash the sync and a "billion laughs" header would exhaust memory.
    """
    count = 0
    stack: list[tuple[Any, frozenset[int]]] = [(data, frozenset())]
    while stack:
        node, parents = stack.pop()
        count += 1
        if count > _MAX_VALUES:
            raise ParseError(
                f"{path}: frontmatter expands to over {_MAX_VALUES:,} values (YAML aliases?); {_FIX}"
            )
        if isinstance(node, dict | list | tuple | set):
            if id(node) in parents:
                raise ParseError(f"{path}: frontmatter refers to itself (a recursive YAML alias); {_FIX}")
            inner = parents | {id(node)}
            children = [*node.keys(), *node.values()] if isinstance(node, dict) else list(node)
            stack.extend((child, inner) for child in children)
