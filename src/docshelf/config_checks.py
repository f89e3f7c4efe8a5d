"""What is wrong with a setting, said in one line: the setting's name (and the variable it came
from), the name it was probably meant to be, and the values it takes."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeGuard

from docshelf.errors import ConfigError

__all__ = [
    "BadEnvValue",
    "check_config_file",
    "check_overlap",
    "describe",
    "glob_problem",
    "is_table",
    "source_variable",
]


class BadEnvValue(ValueError):
    """A DOCSHELF_* variable whose text cannot be read as the list or table its setting holds."""

    def __init__(self, key: str, value: str, section: str | None = None, example: str | None = None) -> None:
        self.key, self.value, self.section = key, value, section
        self.example = example or '{"name": "value"}'
        super().__init__(self.message())

    @property
    def variable(self) -> str:
        table = f"{self.section.upper()}__" if self.section else ""
        return f"DOCSHELF_{table}{self.key.upper()}"

    def message(self) -> str:
        shown = self.value if len(self.value) <= 60 else self.value[:59] + "…"
        if self.variable == "DOCSHELF_STORE":  # read as a folder, as DOCSHELF_DATA_DIR is
            return (
                f"DOCSHELF_STORE={shown!r} is neither a postgresql:// URL nor the [store] table as JSON; "
                "for a folder to keep the index in, set DOCSHELF_DATA_DIR"
            )
        return f"{self.variable}={shown!r} is not valid JSON; write the table as JSON, e.g. '{self.example}'"


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is no gitignore-style glob, or None. pathspec takes an unclosed ``[`` as a
    pattern that matches nothing, so ``include = ["["]`` indexed nothing and said nothing."""
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except ValueError as exc:  # GitIgnorePatternError, a ValueError in every pathspec version
        return str(exc).rstrip(".")
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            j = i + 1
            if j < len(pattern) and pattern[j] in "!^":
                j += 1
            if j < len(pattern) and pattern[j] == "]":  # "[]]": a class holding "]"
                j += 1
            close = pattern.find("]", j)
            if close < 0:
                return f"the '[' at position {i + 1} is never closed (write \\[ for a literal bracket)"
            i = close
        i += 1
    return None


def is_table(kind: Any) -> TypeGuard[type[Any]]:
    """``kind`` is a class of settings (one with ``model_fields``), not a plain type."""
    return isinstance(kind, type) and hasattr(kind, "model_fields")


def _fields(model: type[Any]) -> dict[str, type[Any] | None]:
    """Each setting of ``model``: its table's class for a table, None for a plain value."""
    out: dict[str, type[Any] | None] = {}
    for key, field in model.model_fields.items():
        kind = field.annotation
        out[key] = kind if is_table(kind) else None
    return out


def _near(settings_cls: type[Any], loc: Sequence[str]) -> str | None:
    """The full name a misspelled or misplaced key ``loc`` most likely meant."""
    tables = _fields(settings_cls)
    key = loc[-1]
    if len(loc) == 1:
        here = list(tables)
    else:
        table = tables.get(loc[0])
        here = list(_fields(table)) if table is not None else []
    close = difflib.get_close_matches(key, here, n=1)
    if close:
        return ".".join([*loc[:-1], close[0]])
    # a key in the wrong table, or outside its table: `exclude = [...]` above `[sources]`
    for name, table in tables.items():
        if table is not None and key in table.model_fields:
            return f"{name}.{key}"
    return None


def source_variable(loc: Sequence[str], overrides: Mapping[str, Any]) -> str | None:
    """The DOCSHELF_* variable a setting's value came from, if it did (variables win over the file;
    arguments given in code win over variables)."""
    if not loc or loc[0] in overrides:
        return None
    name = "DOCSHELF_" + "__".join(part.upper() for part in loc[:2])
    return next((var for var in os.environ if var.upper() == name), None)


def describe(
    errors: Sequence[Mapping[str, Any]], settings_cls: type[Any], overrides: Mapping[str, Any]
) -> str:
    """Validation errors (records of type, loc, msg, input, ctx, as pydantic made them) as
    ``name: what is wrong`` parts joined by "; "."""
    parts = []
    for err in errors:
        loc = [str(p) for p in err["loc"]]
        shown = ".".join(loc)
        if err["type"] == "extra_forbidden":
            near = _near(settings_cls, loc)
            hint = f"; did you mean {near}?" if near else ""
            parts.append(f"{shown}: no such setting{hint}")
            continue
        variable = source_variable(loc, overrides)
        if variable is not None:
            shown += f" (from {variable})"
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{shown}: {msg}" if shown else msg)
    return "; ".join(parts)


def check_overlap(chunk: Any, overrides: Mapping[str, Any], config: Path | None) -> None:
    """Refuse a chosen ``chunk.overlap_tokens`` that is not less than ``chunk.max_tokens`` (the
    chunker quietly cut it to half a chunk). The default (32) beside a small max_tokens is fine."""
    if "overlap_tokens" in chunk.model_fields_set and chunk.overlap_tokens >= chunk.max_tokens:
        where = f" in {config}" if config else ""
        variable = source_variable(("chunk", "overlap_tokens"), overrides)
        shown = f" (from {variable})" if variable else ""
        raise ConfigError(
            f"invalid settings{where}: chunk.overlap_tokens{shown} ({chunk.overlap_tokens}) must be less "
            f"than chunk.max_tokens ({chunk.max_tokens}), or each chunk would only repeat the one before; "
            "lower it and retry"
        )


def check_config_file(config: Path) -> None:
    """A config path that names no regular file, said for what it is (all were "does not exist")."""
    if config.is_dir():
        inside = config / "docshelf.toml"
        hint = f"pass {inside}" if inside.is_file() else "pass the docshelf.toml file, not its folder"
        raise ConfigError(f"config file {config} is a folder; {hint}")
    if not config.exists():
        raise ConfigError(f"config file {config} does not exist; pass an existing --config path")
    if not config.is_file():  # a device or a FIFO: reading it would never end, or end in garbage
        raise ConfigError(
            f"config file {config} is not a regular file (a device, pipe or socket); "
            "pass a docshelf.toml file"
        )
