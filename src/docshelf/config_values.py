"""Values checked and converted as pydantic's lax mode does for the values a docshelf.toml, a
DOCSHELF_* variable or a caller hands over (``"5"`` and ``5.0`` are an int 5, ``"yes"`` is True), and
refused with pydantic's error records (type, loc, msg, input, ctx): config_checks.describe turns
them into the one line users see, and users and tests know pydantic's wording."""

from __future__ import annotations

import math
import operator
import typing
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

__all__ = ["ErrorRecord", "Invalid", "ValidationError", "error", "validate"]

_MISSING: Any = object()
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})
_I64 = float(2**63)
_LISTS: tuple[type[Any], ...] = (list, tuple, set, frozenset, deque, type({}.keys()), type({}.values()))
_BOUNDS = (
    ("gt", "greater_than", "greater than", operator.gt),
    ("ge", "greater_than_equal", "greater than or equal to", operator.ge),
    ("le", "less_than_equal", "less than or equal to", operator.le),
)

ErrorRecord = dict[str, Any]  # type, loc, msg, input and (where there is one) ctx


class ValidationError(ValueError):
    """Settings that do not validate: ``errors()`` lists each problem as pydantic's records did."""

    def __init__(self, records: list[ErrorRecord], title: str) -> None:
        self._records, self.title = records, title
        super().__init__(self._text())

    def errors(self) -> list[ErrorRecord]:
        return [dict(r) for r in self._records]

    def error_count(self) -> int:
        return len(self._records)

    def _text(self) -> str:
        count = len(self._records)
        lines = [f"{count} validation error{'s' if count != 1 else ''} for {self.title}"]
        for r in self._records:
            lines.append(".".join(map(str, r["loc"])) or "(the whole value)")
            given = r["input"]
            kind = type(given).__name__
            lines.append(f"  {r['msg']} [type={r['type']}, input_value={given!r}, input_type={kind}]")
        return "\n".join(lines)


class Invalid(Exception):
    """Problems found below some location (their ``loc`` is relative to it)."""

    def __init__(self, records: list[ErrorRecord]) -> None:
        self.records = records


def error(kind: str, msg: str, value: Any, ctx: dict[str, Any] | None = None) -> Invalid:
    record: ErrorRecord = {"type": kind, "loc": (), "msg": msg, "input": value}
    if ctx is not None:
        record["ctx"] = ctx
    return Invalid([record])


def _number_text(value: float) -> str:
    """A bound as pydantic's messages print it: 0.0 as "0"."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _text(value: Any) -> str | None:
    """The text in a str or bytes value (bytes that are no UTF-8 as text no number or word can
    match), else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return None


def _to_int(value: Any) -> int:
    if isinstance(value, int):  # bool too: lax mode reads True as 1
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise error("finite_number", "Input should be a finite number", value)
        if not value.is_integer():
            msg = "Input should be a valid integer, got a number with a fractional part"
            raise error("int_from_float", msg, value)
        if not -_I64 < value < _I64:
            msg = "Unable to parse input string as an integer, exceeded maximum size"
            raise error("int_parsing_size", msg, value)
        return int(value)
    text = _text(value)
    if text is None:
        raise error("int_type", "Input should be a valid integer", value)
    text = text.strip()
    whole, dot, fraction = text.partition(".")
    if dot and fraction and not fraction.strip("0"):  # "5.00" is 5; "5." is not
        text = whole
    if text.isascii():
        try:
            return int(text)
        except ValueError:
            pass
    raise error("int_parsing", "Input should be a valid integer, unable to parse string as an integer", value)


def _to_float(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    text = _text(value)
    if text is None:
        raise error("float_type", "Input should be a valid number", value)
    text = text.strip()
    if text.isascii():
        try:
            return float(text)
        except ValueError:
            pass
    raise error("float_parsing", "Input should be a valid number, unable to parse string as a number", value)


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    parsing = error("bool_parsing", "Input should be a valid boolean, unable to interpret input", value)
    if isinstance(value, (int, float)):
        if isinstance(value, float):
            fits = math.isfinite(value) and value.is_integer() and -_I64 < value < _I64
        else:
            fits = -(2**63) <= value < 2**63  # pydantic reads a number beyond 64 bits as no number
        if not fits:
            raise error("bool_type", "Input should be a valid boolean", value)
        if value in (0, 1):
            return bool(value)
        raise parsing
    if isinstance(value, (str, bytes)):
        text = _text(value)
        lowered = text.lower() if text is not None else ""
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        raise parsing
    raise error("bool_type", "Input should be a valid boolean", value)


def _check_number(value: float, given: Any, field: Any, as_float: bool, finite: bool) -> None:
    if as_float and finite and not math.isfinite(value):
        raise error("finite_number", "Input should be a finite number", given)
    if field is None:
        return
    for name, kind, words, ok in _BOUNDS:
        bound = getattr(field, name)
        if bound is not None and not ok(value, bound):
            shown = float(bound) if as_float else bound
            raise error(kind, f"Input should be {words} {_number_text(shown)}", given, ctx={name: shown})


def validate(annotation: Any, value: Any, field: Any, finite: bool) -> Any:
    """``value`` as ``annotation``, or Invalid. ``field`` holds the bounds (``ge``, ``gt``, ``le``) or
    is None; ``finite`` refuses inf and nan; a class of settings converts a value itself."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, typing.get_origin(int | None)) and type(None) in args:
        if value is None:
            return None
        inner = [a for a in args if a is not type(None)]
        return validate(inner[0], value, field, finite)
    if origin is Literal:
        if any(value == a and type(value) is type(a) for a in args) or (
            isinstance(value, str) and value in args
        ):
            return value
        names = [repr(a) for a in args]
        expected = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        raise error("literal_error", f"Input should be {expected}", value, ctx={"expected": expected})
    if origin is list:
        if not isinstance(value, _LISTS):
            raise error("list_type", "Input should be a valid list", value)
        return _items(args[0], enumerate(value), finite)
    if origin is dict:
        if not isinstance(value, Mapping):
            raise error("dict_type", "Input should be a valid dictionary", value)
        return _pairs(args[0], args[1], value, finite)
    if isinstance(annotation, type) and hasattr(annotation, "_from_value"):
        return annotation._from_value(value)
    if annotation is bool:
        return _to_bool(value)
    if annotation is int:
        number: float = _to_int(value)
        _check_number(number, value, field, False, finite)
        return number
    if annotation is float:
        number = _to_float(value)
        _check_number(number, value, field, True, finite)
        return number
    if annotation is str:
        if isinstance(value, str):
            return str(value)
        if not isinstance(value, (bytes, bytearray)):
            raise error("string_type", "Input should be a valid string", value)
        try:
            return bytes(value).decode()
        except UnicodeDecodeError:
            msg = "Input should be a valid string, unable to parse raw data as a unicode string"
            raise error("string_unicode", msg, value) from None
    if annotation is Path:
        if isinstance(value, Path):
            return value
        if isinstance(value, str):
            return Path(value)
        raise error("path_type", "Input is not a valid path for <class 'pathlib.Path'>", value)
    raise TypeError(f"settings of type {annotation!r} are not supported")  # a programming error


def _items(kind: Any, values: Any, finite: bool) -> list[Any]:
    out, records = [], []
    for i, item in values:
        try:
            out.append(validate(kind, item, None, finite))
        except Invalid as exc:
            records += [{**r, "loc": (i, *r["loc"])} for r in exc.records]
    if records:
        raise Invalid(records)
    return out


def _pairs(key_kind: Any, value_kind: Any, values: Mapping[Any, Any], finite: bool) -> dict[Any, Any]:
    out, records = {}, []
    for key, item in values.items():
        try:
            checked_key = validate(key_kind, key, None, finite)
        except Invalid as exc:
            records += [{**r, "loc": (key, "[key]", *r["loc"])} for r in exc.records]
            checked_key = _MISSING
        try:
            checked = validate(value_kind, item, None, finite)
        except Invalid as exc:
            records += [{**r, "loc": (key, *r["loc"])} for r in exc.records]
            continue
        if checked_key is not _MISSING:
            out[checked_key] = checked
    if records:
        raise Invalid(records)
    return out
