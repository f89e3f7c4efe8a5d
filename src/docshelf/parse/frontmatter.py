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
    return {str(k): v for k, v in data.items()}, closing.end()
