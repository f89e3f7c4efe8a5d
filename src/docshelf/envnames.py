"""DOCSHELF_* environment variables: how they are read, and those that name no setting warned
about, not ignored silently."""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Iterable
from typing import Any, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_settings import EnvSettingsSource

from docshelf.config_checks import BadEnvValue
from docshelf.config_services import Section

__all__ = ["SHORT_NAMES", "EnvSource", "warn_unknown_env"]

# Short names people guess first, as the (table, key) they stand for; the full name wins.
SHORT_NAMES = {"data_dir": ("store", "data_dir")}


class EnvSource(EnvSettingsSource):
    """DOCSHELF_* variables, plus the shorthands ``DOCSHELF_STORE=postgresql://...`` and
    ``DOCSHELF_DATA_DIR``. A list may be written without JSON (``english,german``)."""

    def __call__(self) -> dict[str, Any]:
        data = super().__call__()
        for short, (table, key) in SHORT_NAMES.items():
            value = self.env_vars.get(f"docshelf_{short}")
            section = data.setdefault(table, {})
            if value is not None and isinstance(section, dict):
                section.setdefault(key, value)
        for table, values in data.items():
            field = self.settings_cls.model_fields.get(table)
            model = field.annotation if field is not None else None
            if isinstance(values, dict) and isinstance(model, type) and issubclass(model, Section):
                # a variable that names no setting is warned about (below), as it may be meant for
                # another version; a key in docshelf.toml is the user's own, and refused
                for key in [k for k in values if k not in model.model_fields]:
                    del values[key]
        return data

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        try:
            return super().decode_complex_value(field_name, field, value)
        except ValueError:
            if field is not None and get_origin(field.annotation) is list:
                return [part.strip() for part in str(value).split(",") if part.strip()]
            raise BadEnvValue(field_name, str(value)) from None

    def prepare_field_value(
        self, field_name: str, field: FieldInfo, value: Any, value_is_complex: bool
    ) -> Any:
        try:
            if field_name == "store" and isinstance(value, str) and "://" in value:
                nested = self.explode_env_vars(field_name, field, self.env_vars)
                return {**nested, "url": value}
            return super().prepare_field_value(field_name, field, value, value_is_complex)
        except BadEnvValue as exc:
            # pydantic-settings wraps this in an error that names only the table: keep the variable
            section = exc.section or (field_name if exc.key != field_name else None)
            raise BadEnvValue(exc.key, exc.value, section) from None


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
