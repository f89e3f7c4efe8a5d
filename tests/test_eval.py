"""`docshelf eval` on small BEIR-layout sets made here: scores, odd ids, and input errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clikit import run, runner

DOCS = {
    "plain": ("Herons", "The grey heron stands in shallow water waiting for fish."),
    ".dot": ("Pelicans", "A pelican scoops fish with the pouch under its bill."),
    "x" * 300: ("Kingfishers", "The kingfisher dives from a perch straight into the river."),
    "a/b c": ("Cormorants", "Cormorants dry their wings on rocks after diving."),
    "other": ("Bread", "Sourdough bread needs a starter, flour, water and salt."),
}
QUERIES = {"q1": "grey heron shallow water", "q2": "pelican pouch bill", "q3": "kingfisher dives river"}
QRELS = [("q1", "plain", "1"), ("q2", ".dot", "1.0"), ("q3", "x" * 300, "2")]


def make_set(
    folder: Path, qrels: list[tuple[str, ...]] = QRELS, extra_lines: str = "\n\n",
    docs: dict[str, tuple[str, str]] = DOCS, queries: dict[str, str] = QUERIES,
) -> Path:  # fmt: skip
    (folder / "qrels").mkdir(parents=True)
    corpus = [json.dumps({"_id": i, "title": t, "text": x}) for i, (t, x) in docs.items()]
    (folder / "corpus.jsonl").write_text("\n".join(corpus) + extra_lines, encoding="utf-8")
    lines = [json.dumps({"_id": i, "text": t}) for i, t in queries.items()]
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = ["query-id\tcorpus-id\tscore", *("\t".join(r) for r in qrels)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + extra_lines, encoding="utf-8")
    return folder


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    return runner(monkeypatch, tmp_path / "data")


def test_eval_scores_every_document_whatever_its_id(cli: CliRunner, tmp_path: Path) -> None:
    """An id starting with a dot became a hidden file (never indexed: 0.857 instead of 1.0), a
    300-character one a file name too long for the disk ("check free disk space", exit 5)."""
    code, out, err = run(cli, "eval", str(make_set(tmp_path / "set")), "--mode", "keyword", "--json")
    assert code == 0, err
    result = json.loads(out)["results"][0]
    assert result["queries"] == 3 and result["ndcg10"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("broken", "expected"),
    [
        ({"qrels": [("q1", "plain")]}, "qrels/test.tsv:2: expected query-id, corpus-id and a score"),
        ({"corpus_line": "{not json"}, "corpus.jsonl:6: not a JSON object"),
        ({"corpus_line": '{"title": "no id"}'}, "corpus.jsonl:6: no '_id' field"),
        ({"qrels": [("q9", "plain", "1")]}, "no query of qrels/test.tsv is in"),
        ({"qrels": [("q1", "nowhere", "1")]}, "no document that qrels/test.tsv judges"),
    ],
)
def test_bad_eval_input_is_one_line_naming_the_line(
    cli: CliRunner, tmp_path: Path, broken: dict[str, object], expected: str
) -> None:
    """Each of these was "unexpected IndexError / JSONDecodeError / KeyError: this is a docshelf bug",
    or all zeros with exit 0."""
    folder = make_set(tmp_path / "set", broken.get("qrels", QRELS), "\n")  # type: ignore[arg-type]
    if "corpus_line" in broken:
        with (folder / "corpus.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(f"{broken['corpus_line']}\n")
    code, _, err = run(cli, "eval", str(folder), "--mode", "keyword")
    assert code == 3 and expected in err and "bug" not in err, err


def test_an_unknown_mode_is_refused(cli: CliRunner, tmp_path: Path) -> None:
    code, _, err = run(cli, "eval", str(make_set(tmp_path / "set")), "--mode", "fuzzy")
    assert code == 2 and "mode must be" in err


def test_eval_scores_the_ranking_a_default_search_returns(tmp_path: Path) -> None:
    """`docshelf eval` asked for 300 chunks, which widened the hybrid candidate lists beyond
    ``search.candidates`` and changed the z-score fusion: its hybrid nDCG@10 was not what a search
    with the same settings ranks (xquad-de 0.9755 in eval, 0.9766 through `docshelf search`)."""
    import random

    from docshelf.config import Settings
    from docshelf.search.evaluate import doc_ranking, load_beir, ndcg_at
    from docshelf.shelf import Shelf
    from docshelf.shelf.evaluate import run_eval

    words = [f"w{i}" for i in range(40)]
    pick = random.Random(7)
    docs = {f"d{i}": ("", " ".join(pick.choices(words, k=30))) for i in range(80)}
    queries = {f"q{i}": " ".join(pick.choices(words, k=4)) for i in range(30)}
    qrels = [(f"q{i}", f"d{(i * 7) % 80}", "1") for i in range(30)]
    folder = make_set(tmp_path / "set", qrels, docs=docs, queries=queries)
    settings = Settings()
    settings.embed.model = "hash"
    settings.search.candidates = 10
    report = run_eval(settings, folder, modes=("hybrid",), workdir=tmp_path / "work")

    data = load_beir(folder, "test")
    settings.store.data_dir = tmp_path / "work" / "index"
    shelf = Shelf(settings)
    try:
        total = 0.0
        for qid, text in data.queries.items():
            hits = shelf.search(text, mode="hybrid", k=10).hits
            total += ndcg_at(doc_ranking((Path(h.path).stem for h in hits), str), data.qrels[qid])
    finally:
        shelf.close()
    assert report.scores[0].ndcg10 == pytest.approx(total / len(data.queries), abs=1e-9)
