"""The README's first screen: the two commands a newcomer runs, and links that lead somewhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALL = (
    'pip install . && docshelf index samples/corpus && docshelf search "how do we page someone for a sev-1"'
)
TESTS = "pip install -e '.[dev]' && pytest -q"


def test_readme_starts_with_the_two_commands_and_ci_runs_the_second() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert first_block == [INSTALL, TESTS]
    assert readme.index(INSTALL) < 200  # on the first screen
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "python -m pip install -q -e '.[dev]'" in ci and ci[-1] == "pytest -q"


def test_every_relative_link_in_the_readme_and_docs_exists() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def _tables(text: str) -> list[tuple[int, str, list[str]]]:
    """Each run of lines that start with "|" outside code blocks: (line number, the line before, rows)."""
    runs: list[tuple[int, str, list[str]]] = []
    fenced, before, rows, start = False, "", [], 0
    for n, line in enumerate([*text.splitlines(), ""], start=1):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("|"):
            start = start or n
            rows.append(line)
            continue
        if rows:
            runs.append((start, before, rows))
            rows, start = [], 0
        before = line
    return runs


def test_every_table_in_the_readme_and_docs_has_a_header_and_one_width() -> None:
    """docs/api.md's table of Shelf methods broke in two: a paragraph stood between its rows, so the
    rows after it showed as text full of "|"."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for start, before, rows in _tables(page.read_text(encoding="utf-8")):
            where = f"{page.name}:{start}"
            assert before.strip() == "", f"{where}: a table must follow a blank line"
            assert len(rows) >= 2 and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", rows[1]), f"{where}: no header row"
            cells = rows[1].count("|")
            # a "|" inside `code` is escaped as "\|"; count only the cell separators
            widths = {len(re.findall(r"(?<!\\)\|", r)) for r in rows}
            assert widths == {cells}, f"{where}: rows of other widths"
