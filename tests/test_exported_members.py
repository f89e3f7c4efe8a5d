"""The public vocabulary: ``docshelf.__all__`` names every type a Shelf hands out, lazily."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import typing
from typing import Any

import docshelf
import docshelf.shelf


def _namespace() -> dict[str, Any]:
    return {name: getattr(docshelf, name) for name in docshelf.__all__}


def test_all_is_sorted_unique_and_every_name_resolves() -> None:
    for module in (docshelf, docshelf.shelf):
        names = module.__all__
        assert len(set(names)) == len(names), module.__name__
        assert names == sorted(names, key=lambda n: (not n.isupper(), n)) or names == sorted(names)
        for name in names:
            assert getattr(module, name) is not None, f"{module.__name__}.{name}"


def test_every_class_of_the_shelf_face_is_exported_from_docshelf() -> None:
    classes = {n for n in docshelf.shelf.__all__ if inspect.isclass(getattr(docshelf.shelf, n))}
    assert classes - set(docshelf.__all__) == set()
    for name in classes:
        assert getattr(docshelf, name) is getattr(docshelf.shelf, name)


def _types_in(hint: Any) -> list[Any]:
    """The classes a type hint names (``list[Hit] | None`` -> [Hit])."""
    args = typing.get_args(hint)
    if args:
        return [t for a in args for t in _types_in(a)]
    return [hint] if inspect.isclass(hint) else []


def test_what_a_shelf_returns_is_named_by_docshelf_all_down_to_every_field() -> None:
    """Each public method's annotations resolve with docshelf's exports alone (a type a door or a
    user receives but cannot import by its public name fails here), and so do the fields of every
    dataclass reachable from them."""
    ns = _namespace()
    seen: set[type] = set()
    todo: list[Any] = []
    for name, member in inspect.getmembers(docshelf.Shelf):
        if name.startswith("_"):
            continue
        target = member.fget if isinstance(member, property) else member
        if callable(target):
            todo.extend(
                t for hint in typing.get_type_hints(target, localns=ns).values() for t in _types_in(hint)
            )
    while todo:
        cls = todo.pop()
        if cls in seen or cls.__module__ in ("builtins", "pathlib", "typing", "collections.abc"):
            continue
        seen.add(cls)
        assert cls.__module__.startswith("docshelf"), cls
        assert getattr(docshelf, cls.__name__, None) is cls, f"{cls.__name__} is not exported from docshelf"
        if dataclasses.is_dataclass(cls):
            todo.extend(
                t for hint in typing.get_type_hints(cls, localns=ns).values() for t in _types_in(hint)
            )
    for expected in ("SearchResult", "Hit", "IndexReport", "SyncReport", "Status", "PassageWindow", "Chunk"):
        assert getattr(docshelf, expected) in seen


def test_importing_docshelf_loads_neither_pydantic_nor_numpy() -> None:
    code = "import sys, docshelf; print(','.join(m for m in ('pydantic', 'numpy') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == ""
