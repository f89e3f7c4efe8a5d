"""bench/ uses docshelf's public names only: a private one (``_name``) changes without notice, and a
bench script that reaches for it breaks silently, or measures something that no longer exists.

Static, so it sees what the source spells out: ``from docshelf.x import _y``, a private module
(``docshelf.embed._e5_onnx``), ``obj._y`` on a name that comes from docshelf (imported, or assigned
from an expression that starts at one), and ``getattr``/``setattr`` with a literal ``"_y"``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = sorted((ROOT / "bench").rglob("*.py"))
_REFLECTION = {"getattr", "setattr", "hasattr", "delattr", "__setattr__", "__getattribute__"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names and attributes; the chain under a call or subscript
    (``Runtime(s).store`` -> ``Runtime``), since what it returns comes from there."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Name):
            return ".".join([node.id, *reversed(parts)])
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            node, parts = node.func, []
        elif isinstance(node, ast.Subscript):
            node, parts = node.value, []
        else:
            return None


def _from_docshelf(expr: ast.expr | None, tainted: set[str]) -> bool:
    if expr is None:
        return False
    for node in ast.walk(expr):
        if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
            path = _dotted(node)
            if path is not None and any(path == t or path.startswith(t + ".") for t in tainted):
                return True
    return False


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
        return [node.target]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [node.optional_vars]
    return []


def _value(node: ast.AST) -> ast.expr | None:
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
        return node.value
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return node.iter
    if isinstance(node, ast.withitem):
        return node.context_expr
    return None


def private_uses(source: str) -> list[str]:
    """Each use of a private docshelf name in ``source``, as "line: what"."""
    tree = ast.parse(source)
    found: list[str] = []
    tainted: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "docshelf":
            module = node.module or ""
            for alias in node.names:
                if _private(alias.name) or any(_private(p) for p in module.split(".")):
                    found.append(f"{node.lineno}: from {module} import {alias.name}")
                tainted.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "docshelf":
                    continue
                if any(_private(p) for p in alias.name.split(".")):
                    found.append(f"{node.lineno}: import {alias.name}")
                tainted.add(alias.asname or alias.name.split(".")[0])
    # what is assigned from docshelf objects is a docshelf object too (until nothing more changes)
    while True:
        before = len(tainted)
        for node in ast.walk(tree):
            if isinstance(node, ast.arg) and _from_docshelf(node.annotation, tainted):
                tainted.add(node.arg)
            elif _from_docshelf(_value(node), tainted):
                for target in _targets(node):
                    parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
                    for part in parts:
                        path = _dotted(part) if isinstance(part, (ast.Name, ast.Attribute)) else None
                        if path is not None:
                            tainted.add(path)
        if len(tainted) == before:
            break
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and _from_docshelf(node.value, tainted):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            # getattr(x, "_y"), or a helper handed a docshelf object and a private name to patch
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            named = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            reflects = name in _REFLECTION or any(_from_docshelf(a, tainted) for a in node.args)
            if reflects and any(_private(n) and n.isidentifier() for n in named):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(set(found), key=lambda f: int(f.split(":")[0]))


@pytest.mark.parametrize("path", BENCH, ids=[str(p.relative_to(ROOT)) for p in BENCH])
def test_bench_uses_no_private_docshelf_name(path: Path) -> None:
    uses = private_uses(path.read_text(encoding="utf-8"))
    assert not uses, f"{path.relative_to(ROOT)} uses private docshelf names: " + "; ".join(uses)


def test_the_check_finds_each_form() -> None:
    source = """
import docshelf.embed._e5_onnx
from docshelf.search.searcher import Searcher, _Reads
from docshelf.runtime import Runtime
from docshelf.store import base as store_base

rt = Runtime(settings)
store = rt.store
searcher = rt.searcher()
dense = store._dense()
vec = searcher.embedder._encode(["q"], "query: ")
store_base._private_helper()
setattr(Searcher, "_fuse", wrapper)
timed(store_base.Store, "_resolve", "dense._resolve")

class Own:
    def __init__(self, runtime: Runtime) -> None:
        self.emb = runtime.embedder

    def score(self) -> None:
        self.emb._model()
        self._mine = 1
"""
    found = [line.split(": ", 1)[1] for line in private_uses(source)]
    assert found == [
        "import docshelf.embed._e5_onnx",
        "from docshelf.search.searcher import _Reads",
        "store._dense",
        "searcher.embedder._encode",
        "store_base._private_helper",
        "setattr(Searcher, '_fuse', wrapper)",
        "timed(store_base.Store, '_resolve', 'dense._resolve')",
        "self.emb._model",
    ]


def test_the_check_leaves_own_and_other_private_names_alone() -> None:
    source = """
import sys
from docshelf.config import load_settings

row = {"_id": 1}
print(load_settings(), "_not_a_name here")
frame = sys._getframe()
settings = load_settings()
settings.store.data_dir = "x"

class Own:
    def __init__(self) -> None:
        self._count = 0
"""
    assert private_uses(source) == []
