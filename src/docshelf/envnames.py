"""DOCSHELF_* environment variables that name no setting: warned about, not ignored silently."""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Iterable

from pydantic import BaseModel

__all__ = ["warn_unknown_env"]


def _env_names(settings_cls: type[BaseModel], short: Iterable[str]) -> list[str]:
    """Every DOCSHELF_* name a setting is read from (upper case)."""
    names = [f"DOCSHELF_{name.upper()}" for name in short]
    for top, field in settings_cls.model_fields.items():
        names.append(f"DOCSHELF_{top.upper()}")
        table = field.annotation
        if isinstance(table, type) and issubclass(table, BaseModel):
            names += [f"DOCSHELF_{top.upper()}__{key.upper()}" for key in table.model_fields]
    return names


def warn_unknown_env(settings_cls: type[BaseModel], short: Iterable[str], warned: set[str]) -> None:
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
