"""Time limits are limits: parsing runs in a worker killed at parse.timeout_s (memory capped),
frontmatter is sized before YAML sees it, and chunking a long unspaced run is linear work.

Reported: a 10 MB PDF content stream took 113 s with timeout_s = 20, YAML frontmatter with 1M
values 140 s, 64 KB of unspaced text 15 s of chunking (the e5 tokenizer on ever longer prefixes).
"""

from __future__ import annotations

import random
import string
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from parsekit import misbehaving_registry

from docshelf.chunk import chunk_document
from docshelf.config import Settings
from docshelf.embed import HashEmbedder
from docshelf.errors import ParseError
from docshelf.index.sync import Indexer
from docshelf.parse import default_registry
from docshelf.testing import Stages

_REGISTRY = default_registry()


class _Metered:
    """The real e5 tokenizer's counts, and how many characters the chunker had counted."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.chars = 0

    def count(self, text: str) -> int:
        self.chars += len(text)
        return self.inner.count_tokens(text)  # type: ignore[attr-defined, no-any-return]


@pytest.fixture(scope="module")
def e5_counter(tmp_path_factory: pytest.TempPathFactory) -> object:
    from docshelf.embed.e5 import E5Embedder

    e5 = E5Embedder(cache_dir=tmp_path_factory.mktemp("e5"))  # the tokenizer needs no unpacked weights
    e5.count_tokens("warm up")
    return e5


def _unspaced(n: int, alphabet: str, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


@pytest.mark.parametrize(
    "alphabet", [string.ascii_letters + string.digits + "+/", "abc(){};=,.+-*"], ids=["base64", "minified"]
)
def test_a_long_unspaced_run_is_chunked_in_linear_work(e5_counter: object, alphabet: str) -> None:
    text = "# Blob\n\n" + _unspaced(24_000, alphabet, 3) + "\n\nThe end of the file.\n"
    doc = _REGISTRY.parse(text.encode(), "blob.md")
    metered = _Metered(e5_counter)
    spans = chunk_document(doc, metered, 256, overlap_tokens=32)
    # about one exact count per piece, plus the final check of each chunk: every character is
    # counted a few times, not once per step of a search for the longest piece (~12x before)
    assert metered.chars < 5 * len(text), metered.chars / len(text)
    assert all(s.token_count <= 256 for s in spans)
    assert all(e5_counter.count_tokens(doc.text[s.start : s.end]) <= 256 for s in spans)  # type: ignore[attr-defined]
    covered = "".join(doc.text[s.start : s.end] for s in spans)
    assert covered.count("The end of the file.") == 1 and len(covered) >= len(text) - 16


def test_frontmatter_is_sized_before_yaml_parses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    def never(*_: object, **__: object) -> object:
        raise AssertionError("YAML parsed a frontmatter too big to keep")

    monkeypatch.setattr(yaml, "safe_load", never)
    flow = "---\ntags: [" + ",".join(str(i) for i in range(200_000)) + "]\n---\n# Body\n"
    block = "---\n" + "".join(f"k{i}: {i}\n" for i in range(50_000)) + "---\n# Body\n"
    for text in (flow, block):
        with pytest.raises(ParseError, match="frontmatter"):
            _REGISTRY.parse(text.encode(), "big.md")


def _corpus(root: Path, **files: str) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name.replace("_", ".")).write_text(text, "utf-8")
    return root


def test_a_parser_stuck_in_one_call_is_stopped_at_the_limit(settings: Settings, tmp_path: Path) -> None:
    settings.parse.timeout_s = 1
    corpus = _corpus(tmp_path / "c", a_stuck="x", fine_md="# Fine\n\nStill indexed.\n")
    with Stages(settings, embedder=HashEmbedder()) as rt:
        report = Indexer(rt.store, rt.embedder, settings, misbehaving_registry()).sync("test", [corpus])
    reasons = {s.path: s.reason for s in report.skipped}
    assert report.added == ["fine.md"], reasons
    assert "took over 1 s (parse.timeout_s)" in reasons["a.stuck"]


def test_a_parser_past_the_memory_cap_or_crashing_skips_only_its_file(
    settings: Settings, tmp_path: Path
) -> None:
    settings.parse.max_memory_mb = 256
    corpus = _corpus(tmp_path / "c", a_hungry="x", b_crash="x", fine_md="# Fine\n\nStill indexed.\n")
    with Stages(settings, embedder=HashEmbedder()) as rt:
        indexer = Indexer(rt.store, rt.embedder, settings, misbehaving_registry())
        assert indexer.sync("test", [corpus]).added == ["fine.md"]
        (corpus / "later.md").write_text("# Later\n\nThe worker was replaced.\n", "utf-8")
        report = indexer.sync("test", [corpus])
    reasons = {s.path: s.reason for s in report.skipped}
    assert report.added == ["later.md"], reasons
    assert "parse.max_memory_mb" in reasons["a.hungry"]
    assert "crashed" in reasons["b.crash"]


def test_the_new_parse_settings_do_not_read_as_changes_of_an_older_index() -> None:
    from docshelf.config import load_settings
    from docshelf.shelf.settings import COLLECTION_PARTS, changes, shaping

    now = shaping(load_settings(), COLLECTION_PARTS)
    before = {part: dict(values) for part, values in now.items()}
    for key in ("isolate", "max_memory_mb", "workers"):  # recorded before these settings existed
        del before["parse"][key]
    assert changes(before, now) == []
    now["parse"]["max_memory_mb"] = 512.0
    assert changes(before, now) == ["parse.max_memory_mb: 2048.0 -> 512.0"]
