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
