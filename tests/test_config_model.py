"""The settings models against the pydantic models they replaced (pydantic_settings_ref.py): the
same values, fields set, warnings and error text on thousands of generated mixes of arguments,
DOCSHELF_* variables and docshelf.toml values, valid and not. A keyword search paid ~105 ms for
importing pydantic and building its validators."""

from __future__ import annotations

import datetime
import json
import logging
import math
import os
import random
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pydantic
import pytest

import pydantic_settings_ref as ref
from docshelf import config
from docshelf.config import Settings, load_settings
from docshelf.config_checks import BadEnvValue, check_config_file, check_overlap, describe
from docshelf.config_sources import gather
from docshelf.envnames import SHORT_NAMES, warn_unknown_env
from docshelf.errors import ConfigError

INF, NAN = float("inf"), float("nan")
_STRINGS = [
    "", " ", "x", "5", " 5 ", "5.0", "5.5", "-1", "0", "1", "2", "16", "1e3", "1_000", "+5", "0x10",
    "١٢", "1e400", "inf", "-inf", "nan", "NaN", "Infinity", "true", "True", "FALSE", "yes", "No", "on",
    "off", "t", "f", "y", "n", "tru", "None", "null", "hybrid", "Keyword", "semantic", "rrf", "i8",
    "sqlite", "postgres", "postgresql://u@h/db", "postgres://h/db", "mysql://h/db", "auto", "openai",
    "anthropic", "english", "klingon", "docs/**", "[", "~/x", "/tmp/x", "a\nb", "default", "x" * 201,
    " docs", "e5", "hash",
]  # fmt: skip
_NUMBERS = [
    0, 1, -1, 2, 5, 8, 10, 15, 16, 30, 64, 65, 100, 101, 200, 1000, 2000, 4096, 4097, 65535, 65536,
    1_048_577, 2**63 - 1, 2**63, -(2**63), 10**20, 9.3e18, 0.0, 0.5, 1.0, 1.5, -0.5, 5.0, 16.0, 2.0,
    2.5, 1e3, 1e20, INF, -INF, NAN,
]  # fmt: skip
_LISTS: list[Any] = [
    [], ["english"], ["english", "german"], ["klingon"], ["French"], [" english "], [1], [None],
    ["docs/**", "[ab"], ["["], ["[]]x", "\\[x\\]"], ("x", "y"), {"z"}, [["x"]], [True], [2.5],
]  # fmt: skip
_DICTS: list[Any] = [{}, {".log": ".txt"}, {"": ""}, {"Jenkinsfile": "shell"}, {"a": 1}, {"k": None},
                     {"a": ["b"]}, {"a": True}]  # fmt: skip
_OTHER: list[Any] = [
    None, Path("/tmp/x"), Path("~/y"), b"bytes", b"\xff", bytearray(b"7"), datetime.date(2024, 1, 2), True,
    False,
]  # fmt: skip
_ANY = [*_STRINGS, *_NUMBERS, *_LISTS, *_DICTS, *_OTHER]


def _pool(annotation: Any) -> list[Any]:
    """Values a setting of this type plausibly gets, right and wrong."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return [*args, *(str(a).upper() for a in args), *(f" {a}" for a in args), 1, None]
    if type(None) in args:
        return [None, *_pool(next(a for a in args if a is not type(None)))]
    if origin is list:
        items = _pool(args[0])
        return [*_LISTS, [], *([x] for x in items[:12]), [items[0], items[-1]], "a,b"]
    if origin is dict:
        return _DICTS
    if annotation is bool:
        return [True, False, 0, 1, 2, 0.0, 1.0, 0.5, "true", "off", "YES", "1", "2", "", "maybe", None,
                " true", "1.0", b"yes", 2**64]  # fmt: skip
    if annotation in (int, float):
        return [
            *_NUMBERS, "5", "16", " 17 ", "2.0", "2.5", "1e2", "-3", "inf", "lots", "", True, None, "20.",
            "20.00", "1_6.0", "1__6", ".5", "٢٠", b"20", b"\xff",
        ]  # fmt: skip
    if annotation is Path:
        return ["/tmp/a", "~/b", "", " ", "rel/dir", Path("/tmp/c"), 5, None, ["/x"]]
    return [*_STRINGS, *_NUMBERS[:4], None, b"bytes"]


def _fields(model: Any) -> dict[str, Any]:
    return {name: field.annotation for name, field in model.model_fields.items()}


SECTIONS = {name: ann for name, ann in _fields(ref.Settings).items() if name != "collection"}


def _misspelled(rng: random.Random, name: str) -> str:
    i = rng.randrange(len(name))
    return rng.choice([name[:i] + name[i + 1 :], name + "s", name.replace("_", ""), name.upper()])


def _value(rng: random.Random, annotation: Any) -> Any:
    return rng.choice(_pool(annotation) if rng.random() < 0.75 else _ANY)


def _tables(rng: random.Random, most: int) -> dict[str, Any]:
    """Up to ``most`` settings tables with a few keys each (some misspelled or misplaced)."""
    out: dict[str, Any] = {}
    for _ in range(rng.randint(0, most)):
        roll = rng.random()
        if roll < 0.08:
            out["collection"] = _value(rng, str)
            continue
        section = rng.choice(list(SECTIONS))
        if roll < 0.11:
            out[section] = rng.choice(["x", 5, ["a"], None, True])
            continue
        if roll < 0.13:
            out[rng.choice([_misspelled(rng, section), "exclude", "weights"])] = {"a": 1}
            continue
        table = out.setdefault(section, {}) if isinstance(out.get(section, {}), dict) else {}
        table.update(_table(rng, section))
    return out


def _table(rng: random.Random, section: str) -> dict[str, Any]:
    """A few keys of one table, now and then one misspelled."""
    fields = _fields(SECTIONS[section])
    table: dict[str, Any] = {}
    for _ in range(rng.randint(1, 3)):
        key = rng.choice(list(fields))
        table[_misspelled(rng, key) if rng.random() < 0.08 else key] = _value(rng, fields[key])
    return table


def _toml_value(value: Any) -> str | None:
    """``value`` written as TOML, or None where TOML has no such value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) < 2**63 else None
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value == INF else "-inf" if value == -INF else repr(value))
        )
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        items = [_toml_value(v) for v in value]
        return None if None in items else "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    if isinstance(value, dict):
        pairs = [(json.dumps(str(k)), _toml_value(v)) for k, v in value.items()]
        return (
            None
            if any(v is None for _, v in pairs)
            else "{" + ", ".join(f"{k} = {v}" for k, v in pairs) + "}"
        )
    if isinstance(value, datetime.date):
        return value.isoformat()
    return None


def _toml(tables: Mapping[str, Any]) -> str:
    top, rest = [], []
    for key, value in tables.items():
        written = _toml_value(value)
        if isinstance(value, dict):
            lines = [f"{json.dumps(k)} = {w}" for k, v in value.items() if (w := _toml_value(v)) is not None]
            rest.append(f"[{json.dumps(key)}]\n" + "".join(line + "\n" for line in lines))
        elif written is not None:
            top.append(f"{json.dumps(key)} = {written}\n")
    return "".join(top) + "".join(rest)


def _env_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, dict)):
        return json.dumps(value, default=str)
    return str(value).lower() if isinstance(value, bool) else str(value)


def _env(rng: random.Random) -> dict[str, str]:
    env: dict[str, str] = {}
    for table, values in _tables(rng, 3).items():
        if not isinstance(values, dict):
            env[f"DOCSHELF_{table.upper()}"] = _env_text(values)
            continue
        if rng.random() < 0.1:
            env[f"DOCSHELF_{table.upper()}"] = json.dumps(values, default=str)
            continue
        for key, value in values.items():
            name = f"DOCSHELF_{table}__{key}"
            env[name.upper() if rng.random() < 0.8 else name.lower()] = _env_text(value)
    roll = rng.random()
    if roll < 0.05:
        env["DOCSHELF_DATA_DIR"] = rng.choice(["/tmp/short", "", "~/d"])
    elif roll < 0.08:
        env["DOCSHELF_STORE"] = rng.choice(["postgresql://u@h/db", "not-a-url", '{"pool_size": 3}'])
    elif roll < 0.1:
        env["DOCSHELF_EMBED_MODEL"] = "hash"  # one underscore: a name no setting has
    return env


@contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    for name in [n for n in os.environ if n.upper().startswith("DOCSHELF_")]:
        del os.environ[name]
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextmanager
def _warnings() -> Iterator[list[str]]:
    handler = _Warnings()
    logger = logging.getLogger("docshelf.config")
    logger.addHandler(handler)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)


def _plain(value: Any) -> Any:
    """A value with its types spelled out (5 == 5.0 == True in Python), models with their fields set."""
    if hasattr(type(value), "model_fields"):
        fields = {name: _plain(getattr(value, name)) for name in type(value).model_fields}
        return {"fields": fields, "set": sorted(value.model_fields_set)}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [_plain(v) for v in value]]
    if isinstance(value, dict):
        return {repr(k): _plain(v) for k, v in value.items()}
    return (type(value).__name__, repr(value))


def _records(errors: list[Any]) -> list[tuple[Any, ...]]:
    return [(e["type"], tuple(e["loc"]), e["msg"], repr(e["input"]), repr(e.get("ctx"))) for e in errors]


def _old_load(path: Path | None, overrides: dict[str, Any]) -> Any:
    """load_settings as it was, with the pydantic models (and so their errors)."""
    if path is not None:
        check_config_file(path)
    try:
        settings = ref.Settings.model_validate(gather(ref.Settings, path, overrides))
        check_overlap(settings.chunk, overrides, path)
        warn_unknown_env(ref.Settings, SHORT_NAMES, set())
        return settings
    except pydantic.ValidationError as exc:
        where = f" in {path}" if path else ""
        problems = describe(exc.errors(), ref.Settings, overrides)  # type: ignore[arg-type]
        stop = "" if problems.endswith("?") else "."
        raise _Refused(f"invalid settings{where}: {problems}{stop} Fix it and retry.", exc.errors()) from exc
    except BadEnvValue as exc:
        raise _Refused(f"invalid settings: {exc}", []) from exc
    except ValueError as exc:
        raise _Refused(f"cannot read config {path}: {exc}", []) from exc


class _Refused(Exception):
    def __init__(self, text: str, errors: list[Any]) -> None:
        super().__init__(text)
        self.errors = errors


def _outcome(load: Any, path: Path | None, overrides: dict[str, Any]) -> tuple[Any, ...]:
    with _warnings() as warned:
        try:
            settings = load(path, overrides)
        except (ConfigError, _Refused) as exc:
            cause = exc.__cause__
            errors = cause.errors() if hasattr(cause, "errors") and callable(cause.errors) else []
            return ("refused", str(exc), _records(errors), warned)
        dumped = json.dumps(settings.model_dump(mode="json"), default=repr)
        return ("ok", _plain(settings), dumped, _plain(settings.model_dump()), warned)


def _new_load(path: Path | None, overrides: dict[str, Any]) -> Any:
    config._WARNED.clear()
    return load_settings(path, **overrides)


def _case(rng: random.Random, tmp_path: Path) -> tuple[dict[str, str], Path | None, dict[str, Any]]:
    kinds = rng.choice(["code", "env", "toml", "code env", "env toml", "code env toml"])
    overrides = _tables(rng, 3) if "code" in kinds else {}
    env = _env(rng) if "env" in kinds else {}
    path = None
    if "toml" in kinds:
        path = tmp_path / "docshelf.toml"
        path.write_text(_toml(_tables(rng, 4)), encoding="utf-8")
    return env, path, overrides


@pytest.mark.parametrize("seed", range(8))
def test_generated_settings_match_the_pydantic_models(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    refused = 0
    for n in range(400):
        env, path, overrides = _case(rng, tmp_path)
        with _environment(env):
            old = _outcome(_old_load, path, overrides)
            new = _outcome(_new_load, path, overrides)
        assert new == old, f"case {seed}/{n}: env={env} toml={path and path.read_text()!r} code={overrides}"
        refused += old[0] == "refused"
    assert 40 < refused < 360  # both kinds of outcome are tried, not only one


@pytest.mark.parametrize("seed", range(4))
def test_generated_sections_made_in_code_match(seed: int) -> None:
    """Tables made directly (tests, ``model_validate`` of recorded settings): ``WebSettings(depth=1)``."""
    rng = random.Random(100 + seed)
    for n in range(500):
        name = rng.choice(list(SECTIONS))
        old_cls, new_cls = SECTIONS[name], type(getattr(Settings(), name))
        values = _table(rng, name) if rng.random() < 0.9 else {}
        outcomes = []
        for cls in (old_cls, new_cls):
            try:
                made = cls.model_validate(values) if n % 2 else cls(**values)
                outcomes.append(("ok", _plain(made), _plain(made.model_dump())))
            except ValueError as exc:  # pydantic's ValidationError is one too
                assert hasattr(exc, "errors"), exc
                outcomes.append(("refused", _records(exc.errors()), str(type(exc).__name__)))
        assert outcomes[0] == outcomes[1], f"case {seed}/{n}: {name} {values}"


def test_the_fields_are_described_as_before() -> None:
    """envnames, config_sources, shelf/settings and the docs read ``model_fields``."""
    for name, old_cls in [("", ref.Settings), *SECTIONS.items()]:
        new_cls = type(getattr(Settings(), name)) if name else Settings
        assert list(new_cls.model_fields) == list(old_cls.model_fields), name
        for key, old in old_cls.model_fields.items():
            new = new_cls.model_fields[key]
            assert str(new.annotation).replace("docshelf.config_services.", "").replace(
                "docshelf.config.", ""
            ) == str(old.annotation).replace("pydantic_settings_ref.", ""), (name, key)
            assert new.description == old.description, (name, key)
            assert (new.default_factory is None) == (old.default_factory is None), (name, key)
            default = new.default_factory() if new.default_factory else new.default
            expected = old.default_factory() if old.default_factory else old.default  # type: ignore[call-arg]
            assert _plain(default) == _plain(expected), (name, key)
            bounds = {k: getattr(m, k) for m in old.metadata for k in ("ge", "gt", "le") if hasattr(m, k)}
            got = {k: getattr(new, k) for k in ("ge", "gt", "le") if getattr(new, k) is not None}
            assert got == bounds, (name, key)


def test_copies_assignments_and_comparisons_behave_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """What callers do with settings: set ``store.data_dir``, ``model_copy(update=..., deep=...)``,
    compare, pickle (parse workers), and build a table from a recorded dict."""
    import copy
    import pickle

    for name in [n for n in os.environ if n.upper().startswith("DOCSHELF_")]:
        monkeypatch.delenv(name)
    runs = []

    def old(data: dict[str, Any]) -> Any:  # Settings' own __init__ gathered the variables
        return ref.Settings(**gather(ref.Settings, None, data))

    for make in (old, Settings.model_validate):
        s = make({"chunk": {"max_tokens": "64"}, "collection": "c"})
        s.store.data_dir = Path("/tmp/elsewhere")
        shallow = s.model_copy(update={"collection": "other"})
        deep = s.model_copy(deep=True)
        deep.chunk.max_tokens = 99
        same_table = shallow.chunk is s.chunk and deep.chunk is not s.chunk
        table = type(s.search).model_validate({"k": 3})
        kept = type(s.search).model_validate(table) is table
        with pytest.raises(ValueError, match='object has no field "nope"'):
            s.store.nope = 1
        runs.append([
            _plain(s), _plain(shallow), _plain(deep), same_table, kept, _plain(table),
            s == make({"chunk": {"max_tokens": 64}, "collection": "c"}), s == shallow,
            s.chunk == deep.chunk, sorted(shallow.model_fields_set), sorted(s.store.model_fields_set),
            _plain(pickle.loads(pickle.dumps(s))), _plain(copy.deepcopy(s)), repr(s.chunk),
            s.store.model_dump(mode="json"), s.model_dump()["chunk"], type(s).__hash__ is None,
        ])  # fmt: skip
    for i, (a, b) in enumerate(zip(*runs, strict=True)):
        assert a == b, i


def test_direct_construction_errors_list_pydantics_records() -> None:
    from docshelf.config import SearchSettings
    from docshelf.config_model import ValidationError

    with pytest.raises(ValidationError) as caught:
        SearchSettings(k=0, mode="fast")  # type: ignore[arg-type]
    assert [(e["type"], e["loc"]) for e in caught.value.errors()] == [
        ("literal_error", ("mode",)),
        ("greater_than_equal", ("k",)),
    ]
    assert str(caught.value).startswith("2 validation errors for SearchSettings\nmode\n  Input should be")
