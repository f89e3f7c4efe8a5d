"""Classes of settings without pydantic, declared as pydantic models were (class annotations,
``Field(default, ge=..., description=...)``, ``field_validator``, ``model_validator``) and used as
they were (``model_fields``, ``model_copy``, ``model_dump``, ``model_validate``,
``model_fields_set``); values are checked as config_values says.

Importing pydantic and building its validators cost every command ~105 ms, a third of a keyword
search; tests/test_config_model.py holds these classes to the pydantic models they replaced.
"""

from __future__ import annotations

import copy
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar, dataclass_transform, get_origin

from docshelf.config_values import ErrorRecord, Invalid, ValidationError, error, validate

__all__ = [
    "ErrorRecord",
    "Field",
    "FieldInfo",
    "Model",
    "ValidationError",
    "field_validator",
    "model_validator",
]

_T = TypeVar("_T")
_M = TypeVar("_M", bound="Model")
_MISSING: Any = object()
_VALIDATOR = "__docshelf_validator__"


class FieldInfo:
    """One setting: its type, default, description and bounds (what ``model_fields`` holds)."""

    __slots__ = ("allow_inf_nan", "annotation", "default", "default_factory", "description", "ge", "gt", "le")

    def __init__(
        self,
        default: Any = _MISSING,
        *,
        default_factory: Callable[[], Any] | None = None,
        description: str | None = None,
        ge: float | None = None,
        gt: float | None = None,
        le: float | None = None,
        allow_inf_nan: bool | None = None,
    ) -> None:
        self.annotation: Any = None
        self.default = default
        self.default_factory = default_factory
        self.description = description
        self.ge, self.gt, self.le = ge, gt, le
        self.allow_inf_nan = allow_inf_nan

    def is_required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None

    def get_default(self) -> Any:
        return self.default_factory() if self.default_factory is not None else self.default

    def __repr__(self) -> str:
        shown = {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) not in (None, _MISSING)}
        return "FieldInfo(" + ", ".join(f"{k}={v!r}" for k, v in sorted(shown.items())) + ")"


def Field(  # pydantic's name, so the declarations read as they did
    default: Any = _MISSING,
    *,
    default_factory: Callable[[], Any] | None = None,
    description: str | None = None,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    allow_inf_nan: bool | None = None,
) -> Any:
    """A setting's default, description and bounds, declared as the class attribute's value."""
    return FieldInfo(
        default, default_factory=default_factory, description=description, ge=ge, gt=gt, le=le,
        allow_inf_nan=allow_inf_nan,
    )  # fmt: skip


def field_validator(*fields: str, mode: Literal["before", "after"] = "after") -> Callable[[_T], _T]:
    """Mark a classmethod ``(cls, value) -> value`` that checks ``fields``: "before" sees the value
    as given, "after" the value of the field's type; a ValueError names the field."""

    def mark(method: _T) -> _T:
        setattr(getattr(method, "__func__", method), _VALIDATOR, ("field", fields, mode))
        return method

    return mark


def model_validator(*, mode: Literal["after"]) -> Callable[[_T], _T]:
    """Mark a method ``(self) -> self`` run once every field is valid."""

    def mark(method: _T) -> _T:
        setattr(method, _VALIDATOR, ("model", (), mode))
        return method

    return mark


def _call(method: Callable[[Any], Any], value: Any, given: Any) -> Any:
    """A validator's result; its ValueError (or failed assert) as pydantic recorded it, with the
    value as it was ``given`` (a tuple of languages, not the list it became)."""
    try:
        return method(value)
    except ValueError as exc:
        raise error("value_error", f"Value error, {exc}", given, ctx={"error": exc}) from None
    except AssertionError as exc:
        raise error("assertion_error", f"Assertion failed, {exc}", given, ctx={"error": exc}) from None


@dataclass_transform(kw_only_default=True)
class Model:
    """A class of settings: every key names a field (extra ones are refused), values are checked
    and converted on construction, never on assignment (callers set ``store.data_dir``)."""

    model_fields: ClassVar[dict[str, FieldInfo]] = {}
    _allow_inf_nan: ClassVar[bool] = True
    _validate_default: ClassVar[bool] = False
    _field_validators: ClassVar[dict[str, list[tuple[str, Callable[..., Any]]]]] = {}
    _model_validators: ClassVar[list[Callable[[Any], Any]]] = []

    def __init_subclass__(
        cls, *, allow_inf_nan: bool | None = None, validate_default: bool | None = None, **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        if allow_inf_nan is not None:
            cls._allow_inf_nan = allow_inf_nan
        if validate_default is not None:
            cls._validate_default = validate_default
        hints = typing.get_type_hints(cls)
        fields: dict[str, FieldInfo] = {}
        for base in reversed(cls.__mro__[:-1]):
            fields.update(getattr(base, "model_fields", {}))
            for name in vars(base).get("__annotations__", {}):  # inspect costs ~5 ms to import
                if name.startswith("_") or get_origin(hints[name]) is ClassVar or hints[name] is ClassVar:
                    continue
                declared = base.__dict__.get(name, _MISSING)
                info = declared if isinstance(declared, FieldInfo) else FieldInfo(declared)
                info.annotation = hints[name]
                fields[name] = info
        for name in fields:
            if name in cls.__dict__:
                delattr(cls, name)  # the class's attribute is no default to fall back on
        cls.model_fields = fields
        marks: dict[str, tuple[str, tuple[str, ...], str]] = {}  # in the order they were defined
        for base in reversed(cls.__mro__):
            for attr, member in vars(base).items():
                marked = getattr(getattr(member, "__func__", member), _VALIDATOR, None)
                if marked is not None:
                    marks[attr] = marked
        by_field: dict[str, list[tuple[str, Callable[..., Any]]]] = {}
        after: list[Callable[[Any], Any]] = []
        for attr, (kind, names, mode) in marks.items():
            method = getattr(cls, attr)
            if kind == "model":
                after.append(method)
            for name in names:
                if name not in fields:  # a typo would leave the field unchecked
                    raise TypeError(f"{cls.__name__}.{attr} checks {name!r}, which is no field")
                by_field.setdefault(name, []).append((mode, method))
        cls._field_validators, cls._model_validators = by_field, after

    def __init__(self, **data: Any) -> None:
        self._fill(data)

    @classmethod
    def _from_value(cls: type[_M], value: Any) -> _M:
        """A table given as a value: an instance as it is (pydantic's default), a dict validated."""
        if isinstance(value, cls):
            return value
        if not isinstance(value, dict):
            msg = f"Input should be a valid dictionary or instance of {cls.__name__}"
            raise error("model_type", msg, value, ctx={"class_name": cls.__name__})
        made = cls.__new__(cls)
        try:
            made._fill(value)
        except ValidationError as exc:
            raise Invalid(exc.errors()) from None
        return made

    def _fill(self, data: Mapping[Any, Any]) -> None:
        cls = type(self)
        records: list[ErrorRecord] = []
        values: dict[str, Any] = {}
        for name, field in cls.model_fields.items():
            given = name in data
            if given:
                value = data[name]
            elif field.is_required():
                records.append(
                    {"type": "missing", "loc": (name,), "msg": "Field required", "input": dict(data)}
                )
                continue
            else:
                value = field.get_default()
                if not cls._validate_default:
                    values[name] = value
                    continue
            try:
                values[name] = self._check(name, field, value)
            except Invalid as exc:
                records += [{**r, "loc": (name, *r["loc"])} for r in exc.records]
        for key, value in data.items():
            if not isinstance(key, str):
                records.append(
                    {"type": "invalid_key", "loc": (key,), "msg": "Keys should be strings", "input": key}
                )
            elif key not in cls.model_fields:
                msg = "Extra inputs are not permitted"
                records.append({"type": "extra_forbidden", "loc": (key,), "msg": msg, "input": value})
        if not records:
            object.__setattr__(self, "__dict__", values)
            object.__setattr__(self, "_fields_set", {k for k in data if k in cls.model_fields})
            for method in cls._model_validators:
                try:
                    _call(method, self, data)  # pydantic's record holds the table as given
                except Invalid as exc:
                    records += exc.records
        if records:
            raise ValidationError(records, cls.__name__)

    @classmethod
    def _check(cls, name: str, field: FieldInfo, given: Any) -> Any:
        validators = cls._field_validators.get(name, [])
        value = given
        for mode, method in validators:
            if mode == "before":
                value = _call(method, value, given)
        allowed = field.allow_inf_nan if field.allow_inf_nan is not None else cls._allow_inf_nan
        value = validate(field.annotation, value, field, finite=not allowed)
        for mode, method in validators:
            if mode == "after":
                value = _call(method, value, given)
        return value

    @classmethod
    def model_validate(cls: type[_M], obj: Any) -> _M:
        """``obj`` (a dict of the fields) validated; an instance of the class as it is."""
        if isinstance(obj, cls):
            return obj
        if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
            return cls(**obj)  # through __init__, as pydantic called a class's own __init__
        try:
            return cls._from_value(obj)
        except Invalid as exc:
            raise ValidationError(exc.records, cls.__name__) from None

    @property
    def model_fields_set(self) -> set[str]:
        """The fields given a value (at construction or since), not left to their default."""
        fields_set: set[str] = self.__dict__.get("_fields_set", set())
        return fields_set

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in type(self).model_fields:
            raise ValueError(f'"{type(self).__name__}" object has no field "{name}"')
        self.__dict__[name] = value
        self.model_fields_set.add(name)

    def __getstate__(self) -> dict[str, Any]:
        return {"values": self._values(), "set": set(self.model_fields_set)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "__dict__", dict(state["values"]))
        object.__setattr__(self, "_fields_set", set(state["set"]))

    def _values(self) -> dict[str, Any]:
        return {name: self.__dict__[name] for name in type(self).model_fields}

    def model_copy(self: _M, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> _M:
        """A copy (nested tables shared unless ``deep``), ``update`` set without validation."""
        state = self.__getstate__()
        if deep:
            state = copy.deepcopy(state)
        made = type(self).__new__(type(self))
        made.__setstate__(state)
        for name, value in (update or {}).items():
            made.__dict__[name] = value
            made.model_fields_set.add(name)
        return made

    def model_dump(self, *, mode: Literal["python", "json"] = "python") -> dict[str, Any]:
        """The fields as plain values, tables as dicts; ``mode="json"`` also paths as text."""
        return {name: _dump(value, mode) for name, value in self._values().items()}

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Model)
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable, as pydantic's models are

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{k}={v!r}" for k, v in self._values().items()) + ")"


def _dump(value: Any, mode: str) -> Any:
    if isinstance(value, Model):
        return value.model_dump(mode=mode)  # type: ignore[arg-type]
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_dump(v, mode) for v in value]
        return items if mode == "json" or isinstance(value, list) else type(value)(items)
    if isinstance(value, dict):
        return {_dump(k, mode): _dump(v, mode) for k, v in value.items()}
    if mode == "json" and isinstance(value, Path):
        return str(value)
    return value
