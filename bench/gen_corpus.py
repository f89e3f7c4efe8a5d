"""A large Markdown corpus made reproducibly from text every Python install has: the docstrings and
documentation files of the standard library and of the installed packages (from PyPI).

    python bench/gen_corpus.py OUT --files 20000 [--seed 1]

Each file is a title and a few sections of paragraphs drawn (seeded) from that pool; about 7.5
chunks a file at the default 256-token chunks, so 20,000 files give some 150,000 chunks. Files
are numbered and carry a marker word (``mkNNNNNN``) in their first paragraph, so a benchmark can
ask for any one of them by keyword.
"""

from __future__ import annotations

import argparse
import ast
import random
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

__all__ = ["generate", "marker", "paragraphs"]

_MIN, _MAX = 120, 1200  # characters a paragraph keeps


def _sources() -> Iterator[Path]:
    roots = {Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])}
    for root in sorted(roots):
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".md", ".rst", ".txt") and "test" not in path.parts:
                yield path


def _docstrings(source: str) -> Iterator[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            if doc:
                yield doc


def paragraphs(limit: int = 60_000) -> list[str]:
    """Up to ``limit`` distinct paragraphs of prose from the installed Python's files."""
    seen: set[str] = set()
    found: list[str] = []
    for path in _sources():
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        blocks = _docstrings(text) if path.suffix == ".py" else iter([text])
        for block in blocks:
            for para in block.split("\n\n"):
                para = " ".join(para.split())
                if (
                    _MIN <= len(para) <= _MAX
                    and para not in seen
                    and sum(c.isalpha() for c in para) > len(para) // 2
                ):
                    seen.add(para)
                    found.append(para)
                    if len(found) >= limit:
                        return found
    return found


def marker(n: int) -> str:
    """The word only file ``n`` holds."""
    return f"mk{n:06d}"


def generate(out: Path, files: int, seed: int = 1, pool: list[str] | None = None) -> int:
    """Write ``files`` Markdown files under ``out`` (100 a folder); returns the characters written."""
    pool = pool or paragraphs()
    rng = random.Random(seed)
    written = 0
    for n in range(files):
        folder = out / f"part{n // 100:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        title = " ".join([w for w in rng.choice(pool).split() if w.isalpha()][:6]).capitalize() or f"Note {n}"
        lines = [f"# {title}", "", f"{marker(n)} {rng.choice(pool)}", ""]
        for s in range(rng.randint(3, 9)):
            words = [w for w in rng.choice(pool).split() if w.isalpha()][:5]
            lines += [f"## {s + 1}. {' '.join(words).capitalize()}", ""]
            lines += [p for _ in range(rng.randint(1, 3)) for p in (rng.choice(pool), "")]
        text = "\n".join(lines)
        (folder / f"doc{n:06d}.md").write_text(text, "utf-8")
        written += len(text)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    pool = paragraphs()
    chars = generate(args.out, args.files, args.seed, pool)
    print(f"{args.files} files, {chars / 1e6:.1f} MB of text from {len(pool)} paragraphs "
          f"(Python {sys.version.split()[0]})")  # fmt: skip


if __name__ == "__main__":
    main()
