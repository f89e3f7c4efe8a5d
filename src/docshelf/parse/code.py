"""Source code and structured data files (JSON, YAML, TOML) as text.

The text is the file's own text, so line numbers cite the file exactly. Blocks
separated by blank lines are sections; in Python, each top-level ``def`` or
``class`` (with its decorators) starts a heading section named after it.
"""

from __future__ import annotations

import ast

from docshelf.parse.decode import encoding_metadata, read_text
from docshelf.parse.text import is_blank, split_lines, trim_span
from docshelf.types import ParsedDocument, Section

__all__ = ["LANGUAGES", "NAMES", "CodeParser", "code_parsers", "python_sections"]

LANGUAGES: dict[str, tuple[str, ...]] = {
    "python": (".py", ".pyi"),
    "javascript": (".js", ".mjs", ".cjs", ".jsx"),
    "typescript": (".ts", ".tsx", ".mts", ".cts"),
    "go": (".go",),
    "rust": (".rs",),
    "java": (".java",),
    "kotlin": (".kt", ".kts"),
    "scala": (".scala",),
    "c": (".c", ".h"),
    "cpp": (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx"),
    "csharp": (".cs",),
    "swift": (".swift",),
    "ruby": (".rb",),
    "php": (".php",),
    "lua": (".lua",),
    "shell": (".sh", ".bash", ".zsh"),
    "make": (".mk", ".mak"),
    "dockerfile": (".dockerfile",),
    "sql": (".sql",),
    "json": (".json", ".jsonl"),
    "yaml": (".yaml", ".yml"),
    "toml": (".toml",),
    "perl": (".pl", ".pm", ".perl"),
    "r": (".r",),
    "julia": (".jl",),
    "haskell": (".hs",),
    "elixir": (".ex", ".exs"),
    "erlang": (".erl", ".hrl"),
    "dart": (".dart",),
    "clojure": (".clj", ".cljs", ".cljc", ".edn"),
    "ocaml": (".ml", ".mli"),
    "fsharp": (".fs", ".fsi", ".fsx"),
    "zig": (".zig",),
    "nim": (".nim",),
    "objc": (".m", ".mm"),
    "groovy": (".groovy", ".gradle"),
    "powershell": (".ps1", ".psm1"),
    "batch": (".bat", ".cmd"),
    "fish": (".fish",),
    "awk": (".awk",),
    "sed": (".sed",),
    "vim": (".vim",),
    "css": (".css", ".scss", ".sass", ".less"),
    "vue": (".vue",),
    "svelte": (".svelte",),
    "proto": (".proto",),
    "graphql": (".graphql", ".gql"),
    "terraform": (".tf", ".tfvars", ".hcl"),
    "cmake": (".cmake",),
    # systemd units and desktop entries are ini files by another name
    "ini": (".ini", ".cfg", ".conf", ".properties", ".service", ".socket", ".timer", ".desktop"),
    "diff": (".diff", ".patch"),
}
"""file_type -> extensions handled as code/data text."""

NAMES: dict[str, str] = {
    "makefile": "make", "gnumakefile": "make", "dockerfile": "dockerfile", "containerfile": "dockerfile",
}  # fmt: skip
"""Lower-case file names (also before a suffix: ``Makefile.am``, ``Dockerfile.dev``) -> language."""


def _blocks(
    text: str, lines: list[tuple[int, int]], first: int, last: int, path: tuple[str, ...]
) -> list[Section]:
    """Blank-line separated blocks of lines ``first..last`` (inclusive) as code sections."""
    out: list[Section] = []
    run: int | None = None
    for i in range(first, last + 2):
        blank = i > last or is_blank(text[lines[i][0] : lines[i][1]])
        if not blank and run is None:
            run = i
        elif blank and run is not None:
            s, e = trim_span(text, lines[run][0], lines[i - 1][1])
            if e > s:
                out.append(Section(s, e, "code", path))
            run = None
    return out


def python_sections(text: str) -> list[Section]:
    """Sections of Python source: top-level defs/classes as headings, blocks in between.

    Falls back to plain blocks when the source does not parse.
    """
    lines = split_lines(text)
    if not lines:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _blocks(text, lines, 0, len(lines) - 1, ())
    defs: list[tuple[int, int, int, str]] = []  # (first line, def line, last line, name), 0-based
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno]) - 1
            last = (node.end_lineno or node.lineno) - 1
            defs.append((first, node.lineno - 1, last, node.name))
    if any(last >= len(lines) for _, _, last, _ in defs):  # line ends ast counts differently
        return _blocks(text, lines, 0, len(lines) - 1, ())
    sections: list[Section] = []
    pos = 0
    for first, def_line, last, name in defs:
        sections += _blocks(text, lines, pos, first - 1, ())
        s, e = trim_span(text, lines[first][0], lines[def_line][1])
        sections.append(Section(s, e, "heading", (name,), level=1))
        sections += _blocks(text, lines, def_line + 1, last, (name,))
        pos = last + 1
    sections += _blocks(text, lines, pos, len(lines) - 1, ())
    return sections


class CodeParser:
    """One language's source (or data) files; ``file_type`` is the language name."""

    binary: bool = False

    def __init__(self, name: str, extensions: tuple[str, ...]) -> None:
        self.name = name
        self.extensions = extensions

    def parse(self, data: bytes, path: str) -> ParsedDocument:
        """Decode ``data`` and split it into blocks (Python: per top-level def/class)."""
        text, encoding = read_text(data, path)
        if self.name == "python":
            sections = python_sections(text)
        else:
            lines = split_lines(text)
            sections = _blocks(text, lines, 0, len(lines) - 1, ()) if lines else []
        return ParsedDocument(
            text=text,
            sections=sections,
            file_type=self.name,
            metadata={"language": self.name, **encoding_metadata(encoding)},
        )


def code_parsers() -> list[CodeParser]:
    """A parser for every language in LANGUAGES."""
    return [CodeParser(name, exts) for name, exts in LANGUAGES.items()]
