"""Import discipline: the front doors start without heavy libraries, and the package has no cycles."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "docshelf"
HEAVY = ("numpy", "tantivy", "onnxruntime", "usearch", "psycopg", "Stemmer")


@pytest.mark.parametrize(
    "module",
    [
        "docshelf",
        "docshelf.shelf",
        "docshelf.server.app",
        "docshelf.server",
        "docshelf.cli.main",
        "docshelf.web.app",
    ],
)
def test_front_doors_import_no_heavy_library(module: str) -> None:
    # the MCP server's own modules bring pydantic (the SDK's schemas); the shelf and the CLI do not
    heavy = HEAVY if module.startswith("docshelf.server") else (*HEAVY, "pydantic")
    code = f"import sys, {module}; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "", f"importing {module} loaded {proc.stdout.strip()}"


def test_reading_the_settings_loads_no_pydantic(tmp_path: Path) -> None:
    """A keyword search reads the settings: pydantic cost it ~105 ms (its core, its schema building)."""
    (tmp_path / "docshelf.toml").write_text('[search]\nk = 5\n[store]\ndata_dir = "~/x"\n', "utf-8")
    code = (
        "import sys, docshelf.config as c; from pathlib import Path; "
        "s = c.load_settings(); t = c.load_settings(Path(sys.argv[1]), chunk={'max_tokens': 64}); "
        "assert t.search.k == 5 and t.chunk.max_tokens == 64, t; "
        "print(','.join(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env["DOCSHELF_EMBED__THREADS"] = "2"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "docshelf.toml")], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"reading the settings loaded {proc.stdout.strip()}"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(tree: ast.Module, name: str, is_package: bool, known: set[str]) -> set[str]:
    """Modules imported when ``name`` is imported: module-level statements, not TYPE_CHECKING blocks."""
    out: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if "TYPE_CHECKING" not in test:
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name.startswith("docshelf"))
            elif isinstance(node, ast.ImportFrom) and node.module is not None:
                base = node.module
                if node.level:
                    package = name if is_package else name.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        package = package.rpartition(".")[0]
                    base = f"{package}.{node.module}"
                if not base.startswith("docshelf"):
                    continue
                for alias in node.names:  # `from pkg import submodule` imports the submodule
                    sub = f"{base}.{alias.name}"
                    out.add(sub if sub in known else base)

    visit(tree.body)
    return out


def test_the_package_has_no_import_cycle() -> None:
    files = {_module_name(p): p for p in SRC.rglob("*.py")}
    known = set(files)
    graph = {
        name: _top_level_imports(ast.parse(path.read_text("utf-8")), name, path.name == "__init__.py", known)
        & known
        for name, path in files.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def strongconnect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            strongconnect(v)
    assert cycles == [], f"import cycles: {cycles}"


# the packages in data-flow order: a stage imports earlier stages and the shared base, never a
# later stage, the shelf above them, or a front door
STAGES = ("sources", "parse", "chunk", "analyze", "embed", "store", "index", "search", "answer")
BASE = (
    "types", "config", "config_services", "config_checks", "config_sources", "config_model", "config_values",
    "errors", "dsn", "envnames", "bomless", "lazy",
)  # fmt: skip
DOORS = ("cli", "server", "web")
# what a front door may import besides its own package: the shelf's face and the settings/errors
FACES = {"docshelf", "docshelf.shelf", "docshelf.config", "docshelf.errors"}
# the CLI starts the other doors (`docshelf serve`, `docshelf ui`), and the HTTP server serves the
# web page on its port: each through the other's face, never a module behind it
OTHER_DOORS = {"cli": {"docshelf.server", "docshelf.web"}, "server": {"docshelf.web"}, "web": set()}


def _every_import(path: Path, name: str) -> list[tuple[str, int]]:
    """Every docshelf module ``path`` imports, anywhere: at the top, in functions, under TYPE_CHECKING."""
    found: list[tuple[str, int]] = []
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package
                for _ in range(node.level - 1):
                    up = up.rpartition(".")[0]
                base = f"{up}.{base}" if base else up
            found.append((base, node.lineno))
    return [(m, line) for m, line in found if m == "docshelf" or m.startswith("docshelf.")]


def _area(module: str) -> str:
    """The package under docshelf a module belongs to ("" for ``docshelf`` itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _broken_rules(src: Path = SRC) -> list[str]:
    broken: list[str] = []
    for path in sorted(src.rglob("*.py")):
        name = ".".join(path.relative_to(src.parent).with_suffix("").parts).removesuffix(".__init__")
        area = _area(name)
        for target, line in _every_import(path, name):
            where = f"{path.relative_to(src.parent)}:{line} imports {target}"
            other = _area(target)
            if area in DOORS:
                if other != area and target not in FACES and target not in OTHER_DOORS[area]:
                    broken.append(f"{where}: a front door imports only the shelf's face, its own package "
                                  "and another door's face")  # fmt: skip
            elif area in STAGES:
                later = other in STAGES and STAGES.index(other) > STAGES.index(area)
                if other not in (*STAGES, *BASE) or later:
                    broken.append(f"{where}: a stage imports earlier stages and {', '.join(BASE)} only")
            elif area in BASE and other not in BASE:
                broken.append(f"{where}: the shared base imports nothing above it")
    return broken


def test_doors_reach_the_index_only_through_the_shelf_and_stages_never_reach_up() -> None:
    assert _broken_rules() == []


def test_the_rule_check_finds_each_forbidden_arrow(tmp_path: Path) -> None:
    """The check above would pass on a tree it cannot read: here it finds every arrow it forbids."""
    src = tmp_path / "docshelf"
    files = {
        "server/tools.py": "from docshelf import Shelf\nif x:\n    from docshelf.search import results\n",
        "cli/serve.py": "def f():\n    from docshelf.server.http import serve_http\n",
        "index/sync.py": "from docshelf.search.confidence import script_words\n",
        "search/searcher.py": "from docshelf.shelf import Shelf\n",
        "types.py": "from docshelf.store.base import Store\n",
        "search/fine.py": "from docshelf.store.base import Store\nfrom . import results\n",
    }
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    broken = [line.split(": ")[0] for line in _broken_rules(src)]
    assert broken == [
        "docshelf/cli/serve.py:2 imports docshelf.server.http",
        "docshelf/index/sync.py:1 imports docshelf.search.confidence",
        "docshelf/search/searcher.py:1 imports docshelf.shelf",
        "docshelf/server/tools.py:3 imports docshelf.search",
        "docshelf/types.py:1 imports docshelf.store.base",
    ]


_SEARCH = """
import sys
from pathlib import Path
from docshelf import Shelf, load_settings
settings = load_settings()
settings.store.data_dir = Path(sys.argv[1])
with Shelf(settings) as shelf:
    if sys.argv[2] == "index":
        shelf.index([Path(sys.argv[3])])
    hits = shelf.search("Hintergrundaufgaben planen", k=2).hits
print(hits[0].path if hits else "", ",".join(m for m in ("onnx", "wordfreq") if m in sys.modules))
"""


def test_a_search_in_a_new_process_needs_neither_onnx_nor_wordfreq(tmp_path: Path) -> None:
    """What one CLI command or a server's first search pays: importing onnx (ml_dtypes) cost
    0.3-0.9 s and decoding wordfreq's lists 0.5-0.9 s, though neither is needed once the e5
    graph is built and the word lists are cached."""
    pytest.importorskip("wordfreq")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "jobs.md").write_text("# Jobs\n\nDie Hintergrundtasks laufen jede Nacht um zwei Uhr.\n")
    (notes / "deploy.md").write_text("# Deploy\n\nPress the button to roll back a release.\n")
    run = [sys.executable, "-c", _SEARCH, str(tmp_path / "data")]
    first = subprocess.run([*run, "index", str(notes)], capture_output=True, text=True, check=True)
    assert first.stdout.split()[0] == "jobs.md"  # the compound split: it meets Hintergrundtasks
    again = subprocess.run([*run, "search"], capture_output=True, text=True, check=True)
    path, *loaded = again.stdout.split()
    assert path == "jobs.md" and loaded == [], f"a search loaded {loaded}"


_SERVE = """
import sys
from pathlib import Path

import anyio
from mcp import Client

from docshelf.config import load_settings
from docshelf.server import build_server

settings = load_settings()
settings.store.data_dir = Path(sys.argv[1])
server, shelf = build_server(settings)


async def handshake() -> None:
    async with Client(server) as client:
        assert client.server_capabilities is not None
        print(",".join(m for m in sys.argv[2].split(",") if m in sys.modules))


anyio.run(handshake)
shelf.close()
"""


def test_a_server_answers_its_handshake_without_loading_a_heavy_library(tmp_path: Path) -> None:
    """A client waits on initialize: the server reads the index's summary with plain SQLite and
    opens it (numpy, tantivy, the model) only when asked for something (store/__init__ loaded
    numpy through the Store protocol's module, on every start)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nThe first note.\n")
    env = {**os.environ, "DOCSHELF_EMBED__MODEL": "hash"}
    subprocess.run(
        [sys.executable, "-m", "docshelf", "index", str(notes), "--data-dir", str(tmp_path / "data")],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    run = [sys.executable, "-c", _SERVE, str(tmp_path / "data"), ",".join(HEAVY)]
    proc = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "", f"the handshake loaded {proc.stdout.strip()}"


_KEYWORD_SEARCH = """
import sys
from docshelf.cli import main
data, unwanted = sys.argv[1], sys.argv[2].split(",")
sys.argv = ["docshelf", "--data-dir", data, "search", "first note", "--mode", "keyword",
            "--no-helper"]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
loaded = [m for m in unwanted if m in sys.modules]
print(",".join(loaded), file=sys.stderr)
"""


def test_a_keyword_search_from_the_command_line_loads_no_vector_or_other_command_module(
    tmp_path: Path,
) -> None:
    """A keyword search in its own process paid for numpy (named by the store's and the embedders'
    modules), the walker's pathspec (the freshness check), every other command's module (the
    server's anyio) and typer (cli/direct.py reads its arguments): over a quarter of its time, for
    nothing it used."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nThe first note.\n")
    env = {**os.environ, "DOCSHELF_EMBED__MODEL": "hash"}
    data = str(tmp_path / "data")
    subprocess.run(
        [sys.executable, "-m", "docshelf", "index", str(notes), "--data-dir", data],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    unwanted = ["numpy", "onnxruntime", "usearch", "pathspec", "anyio", "typer", "docshelf.cli.serve",
                "docshelf.cli.index", "docshelf.cli.ask"]  # fmt: skip
    run = [sys.executable, "-c", _KEYWORD_SEARCH, data, ",".join(unwanted)]
    proc = subprocess.run(run, env=env, capture_output=True, text=True, check=True)
    assert "a.md" in proc.stdout  # it did search
    assert proc.stderr.strip().splitlines()[-1:] in ([], [""]), f"loaded {proc.stderr.strip()}"
