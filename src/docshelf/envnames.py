"""DOCSHELF_* environment variables: how they are read, and those that name no setting warned
about, not ignored silently.

The rules are those of pydantic-settings (prefix DOCSHELF_, ``__`` between table and key, names
in any case), read here with the standard library: importing pydantic-settings cost every command
about 57 ms (asyncio, its cloud providers).
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import types
from collections import deque
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Any, Union, get_args, get_origin

from docshelf.config_checks import BadEnvValue, is_table

__all__ = ["SHORT_NAMES", "deep_update", "read_env", "warn_unknown_env"]

PREFIX = "docshelf_"
DELIMITER = "__"
# Short names people guess first, as the (table, key) they stand for; the full name wins.
SHORT_NAMES = {"data_dir": ("store", "data_dir")}


def deep_update(mapping: dict[str, Any], *updates: Mapping[str, Any]) -> dict[str, Any]:
    """``mapping`` updated by each of ``updates`` in turn, table by table: a variable for one key
    of a table keeps the table's other keys from the file (pydantic's own deep_update)."""
    merged = mapping.copy()
    for update in updates:
        for key, value in update.items():
            if isinstance(merged.get(key), dict) and isinstance(value, dict):
                merged[key] = deep_update(merged[key], value)
            else:
                merged[key] = value
    return merged


def _is_complex(annotation: Any) -> bool:
    """A type whose value a variable holds as JSON: a table, a list, a dict, a set."""
    kind = get_origin(annotation) or annotation
    if not isinstance(kind, type) or issubclass(kind, (str, bytes)):
        return False
    return is_table(kind) or issubclass(kind, (Mapping, Sequence, Set, tuple, deque))


def _complexity(annotation: Any) -> tuple[bool, bool]:
    """(read as JSON, keep the text when it is not JSON): a union such as ``list[str] | None`` may
    also take the plain text."""
    if _is_complex(annotation):
        return True, False
    if get_origin(annotation) in (Union, types.UnionType) and any(map(_is_complex, get_args(annotation))):
        return True, True
    return False, False


def _is_field(kind: Any) -> bool:
    """A setting's description (``model_fields[name]``), not a type."""
    return not isinstance(kind, type) and hasattr(kind, "default_factory")


def _decode(key: str, field: Any, value: str, section: str | None) -> Any:
    """A complex setting's text: JSON, or for a list the comma-separated items (EnvSource's rule)."""
    try:
        return json.loads(value)
    except ValueError:
        if field is not None and get_origin(field.annotation) is list:
            return [part.strip() for part in value.split(",") if part.strip()]
        raise BadEnvValue(key, value, section, _example(key, field)) from None


def _example(key: str, field: Any) -> str | None:
    """A table's value as JSON for the error's example: its first setting with its default, or
    for a table of names (sources.extensions) a pair of names."""
    annotation = field.annotation if _is_field(field) else None
    if is_table(annotation):
        for name, sub in annotation.model_fields.items():
            default = sub.default
            if isinstance(default, (str, int, float, bool)):
                return json.dumps({name: default})
        return None
    if key == "extensions":
        return '{".log": ".txt"}'
    return None


def _next(kind: Any, key: str) -> Any:
    """What ``key`` below ``kind`` (a setting's description, a model or a raw type) holds: a model's field of
    that name in any case, a dict's value type, or None."""
    annotation = kind.annotation if _is_field(kind) else kind
    if not annotation:
        return None
    origin = get_origin(annotation)
    if isinstance(origin, type) and issubclass(origin, dict):
        args = get_args(annotation)
        return args[-1] if args else None
    for member in get_args(annotation):
        found = _next(member, key)
        if found:
            return found
    if is_table(annotation):
        return next((f for name, f in annotation.model_fields.items() if name.lower() == key.lower()), None)
    return None


def _explode(table: str, field: Any, env: Mapping[str, str]) -> dict[str, Any]:
    """DOCSHELF_TABLE__KEY variables as ``{key: value}``; deeper names nest further."""
    prefix = f"{PREFIX}{table}{DELIMITER}"
    result: dict[str, Any] = {}
    for name, value in env.items():
        if not name.startswith(prefix):
            continue
        *keys, last = name[len(prefix) :].split(DELIMITER)
        node: Any = result
        target: Any = field
        for key in keys:
            target = _next(target, key)
            if isinstance(node, dict):
                node = node.setdefault(key, {})
        target = _next(target, last)
        parsed: Any = value
        if target and value:
            if _is_field(target):
                is_complex, lenient = _complexity(target.annotation)
            else:  # a dict's value type
                is_complex, lenient = _is_complex(target), True
            if is_complex:
                try:
                    info = target if _is_field(target) else None
                    parsed = _decode(last, info, value, table)
                except ValueError:
                    if not lenient:
                        raise
        if isinstance(node, dict):
            node[last] = parsed
    return result


def _field_names(model: type[Any], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with each key that names a field in another case (JSON: {"Model": ...}) renamed."""
    names = {name.lower(): name for name in model.model_fields}
    out: dict[str, Any] = {}
    for key, value in values.items():
        name = names.get(key.lower(), key)
        sub = model.model_fields[name].annotation if name in model.model_fields else None
        if is_table(sub) and isinstance(value, dict):
            value = _field_names(sub, value)
        out[name] = value
    return out


def _table(field: Any) -> type[Any] | None:
    kind = field.annotation
    return kind if is_table(kind) else None


def read_env(settings_cls: type[Any]) -> dict[str, Any]:
    """The settings in DOCSHELF_* variables, as nested dicts, plus the shorthands
    ``DOCSHELF_STORE=postgresql://...`` and ``DOCSHELF_DATA_DIR``. Keys that name no setting are
    left out (warn_unknown_env says so). BadEnvValue for a table or list that is not JSON."""
    env = {name.lower(): value for name, value in os.environ.items()}
    data: dict[str, Any] = {}
    for top, field in settings_cls.model_fields.items():
        value = env.get(PREFIX + top)
        is_complex, lenient = _complexity(field.annotation)
        if top == "store" and value is not None and "://" in value:
            data[top] = {**_explode(top, field, env), "url": value}
        elif not is_complex:
            if value is not None:
                data[top] = value
            continue
        elif value is None:
            nested = _explode(top, field, env)
            if nested:
                data[top] = nested
        else:
            try:
                decoded = _decode(top, field, value, None)
            except ValueError:
                if not lenient:
                    raise
                decoded = value
            if isinstance(decoded, dict):
                data[top] = deep_update(decoded, _explode(top, field, env))
            elif decoded is not None:  # JSON null: unset, as pydantic-settings read it
                data[top] = decoded
        table = _table(field)
        if table is not None and isinstance(data.get(top), dict):
            data[top] = _field_names(table, data[top])
    for short, (table_name, key) in SHORT_NAMES.items():
        value = env.get(PREFIX + short)
        section = data.setdefault(table_name, {})
        if value is not None and isinstance(section, dict):
            section.setdefault(key, value)
    for top, values in data.items():
        found = settings_cls.model_fields.get(top)
        model = _table(found) if found is not None else None
        if isinstance(values, dict) and model is not None:  # every table is a Section
            # a variable that names no setting is warned about (below), as it may be meant for
            # another version; a key in docshelf.toml is the user's own, and refused
            for key in [k for k in values if k not in model.model_fields]:
                del values[key]
    return data


def _env_names(settings_cls: type[Any], short: Iterable[str]) -> list[str]:
    """Every DOCSHELF_* name a setting is read from (upper case)."""
    names = [f"DOCSHELF_{name.upper()}" for name in short]
    for top, field in settings_cls.model_fields.items():
        names.append(f"DOCSHELF_{top.upper()}")
        table = field.annotation
        if is_table(table):
            names += [f"DOCSHELF_{top.upper()}__{key.upper()}" for key in table.model_fields]
    return names


def warn_unknown_env(settings_cls: type[Any], short: Iterable[str], warned: set[str]) -> None:
    """One warning per DOCSHELF_* variable that names no setting (a typo is otherwise silent)."""
    known = set(_env_names(settings_cls, short))
    for name in sorted(os.environ):
        upper = name.upper()
        # DOCSHELF_TEST_*: the test suite's own (a server to test against)
        if not upper.startswith("DOCSHELF_") or upper.startswith("DOCSHELF_TEST_") or name in warned:
            continue
        if upper in known:
            continue
        warned.add(name)
        close = difflib.get_close_matches(upper, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        logging.getLogger("docshelf.config").warning(
            "ignoring %s: no setting has that name%s; names look like DOCSHELF_EMBED__MODEL", name, hint
        )
