"""Where settings come from, and which wins: arguments given in code > DOCSHELF_* variables >
the docshelf.toml file > defaults, merged table by table as pydantic-settings merged them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docshelf.envnames import deep_update, read_env

__all__ = ["gather", "read_toml"]


def _field_names(settings_cls: type[Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` with a key that names a setting in another case (``[Embed]``) renamed to it, the
    first of several winning; the settings first, in their order, then keys that name none (which
    validation refuses)."""
    by_lower: dict[str, list[str]] = {}
    for key in given:
        by_lower.setdefault(key.lower(), []).append(key)
    out: dict[str, Any] = {}
    left = dict(given)
    for name in settings_cls.model_fields:
        matched = [key for key in by_lower.get(name.lower(), []) if key in left]
        if matched:
            out[name] = given[matched[0]]
            for key in matched:
                del left[key]
    out.update(left)
    return out


def read_toml(config: Path) -> dict[str, Any]:
    """The file's tables; OSError when it cannot be read, ValueError when it is no TOML (UTF-8)."""
    import tomllib  # only with a config file

    with config.open("rb") as handle:
        return tomllib.load(handle)


def gather(settings_cls: type[Any], config: Path | None, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The data to validate ``settings_cls`` from: ``overrides`` over the environment over the file.
    The file is read first, so a broken file is reported before a broken variable."""
    toml = _field_names(settings_cls, read_toml(config)) if config is not None else {}
    env = read_env(settings_cls)
    return deep_update(toml, deep_update(env, _field_names(settings_cls, overrides)))
