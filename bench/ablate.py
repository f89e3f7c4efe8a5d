"""Which ranking rules earn their place: each one switched off, on queries it was not tuned on (issue 44).

    python bench/ablate.py run --work W --bible B [--rules R ...] [--part held] [--results F.json]
    python bench/ablate.py table --results F.json [--together "A + B" ...]

`run` searches every set through the real `Searcher` (kept e5 indexes, the bench/eval_all.py
layout: W/e5-NAME/index; B: the sets of bench/make_bible_sets.py) once with every rule on
(`baseline`) and once per rule with that rule off, and records each query's nDCG@10 (documents
ranked by their best chunk, as `docshelf eval` ranks them) in --results; a rerun skips what is
there. A rule is switched off from here, by replacing the public function that implements it or
by its setting; an analyzer rule re-derives a copy of each index's keyword side first (never
re-embedding). Query vectors are kept in W/query-vectors.pkl, so a rerun never embeds again.

Held halves (`--part held`): scifact and nfcorpus test; the QA sets' queries split in two by a
fixed seed (``halves``; the same question id falls in the same half over every set, the
cross-language ones too); the Bible sets' test split. `--part tuning` is the other half (scifact
train, nfcorpus dev, Bible dev), `--part all` every test query (today's figures).

`table` prints, per rule, the gain it brings (on - off) in hybrid and keyword nDCG@10: the mean
over the sets (each set weighs the same) with a paired bootstrap 95% CI (queries resampled within
each set), and the set it costs most and the one it helps most, each with its own CI.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pickle
import random
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docshelf.analyze.analyzer as analyzer_module
import docshelf.search.fusion as fusion
import docshelf.search.hydrate as hydrate_module
import docshelf.search.searcher as searcher_module
from docshelf.analyze import Analyzer
from docshelf.config import Settings, load_settings
from docshelf.search.corpus_languages import CorpusLanguages
from docshelf.search.evaluate import doc_ranking, file_name, load_beir, ndcg_at
from docshelf.search.searcher import Searcher
from docshelf.store.base import SearchFilter
from docshelf.testing import Stages

ROOT = Path(__file__).resolve().parents[1]
SEED = 44
HITS = 12  # chunks asked first (then 40 when they hold < 10 documents); the fusion takes 200 a side
B = 2000  # bootstrap resamples


@dataclass(frozen=True)
class Set:
    label: str
    data: Path  # the BEIR folder whose corpus the index holds
    questions: Path | None = None  # another folder's queries with the same ids
    tuning: str | None = None  # the qrels split tuned on; None: a seeded half of the test queries

    @property
    def index(self) -> str:
        return self.data.name


def sets(eval_data: Path, bible: Path) -> list[Set]:
    out = [
        Set("scifact", eval_data / "scifact", tuning="train"),
        Set("nfcorpus", eval_data / "nfcorpus", tuning="dev"),
    ]
    out += [Set(n, eval_data / n) for n in ("xquad-en", "xquad-de", "xquad-zh", "cmrc2018-dev")]
    for corpus, asked in (("de", "en"), ("zh", "en"), ("en", "de"), ("en", "zh")):
        out.append(
            Set(f"xquad {asked}→{corpus}", eval_data / f"xquad-{corpus}", eval_data / f"xquad-{asked}")
        )
    mono = ("en", "de", "fr", "es", "it", "tl", "fr-mixed", "es-mixed")
    out += [Set(f"bible-{n}", bible / f"bible-{n}", tuning="dev") for n in mono]
    for n in ("en-ru", "en-ja", "en-tr", "en-ko", "en-ar", "en-hi"):
        out.append(Set(f"bible {n.replace('-', '→')}", bible / f"bible-{n}", tuning="dev"))
    # their passages are bible-en's (the same translation): that index, their questions
    for n in ("ko", "ar", "hi", "zh"):
        out.append(Set(f"bible {n}→en", bible / "bible-en", bible / f"bible-{n}-en", tuning="dev"))
    return out


def halves(qids: list[str]) -> tuple[set[str], set[str]]:
    """(tuning, held): the ids shuffled with a fixed seed, split in two."""
    order = sorted(qids)
    random.Random(SEED).shuffle(order)
    return set(order[: len(order) // 2]), set(order[len(order) // 2 :])


def queries(s: Set, part: str) -> tuple[dict[str, str], dict[str, dict[str, int]], dict[str, str]]:
    """(query id -> text, qrels, file name -> corpus id) of one part of a set."""
    asked = (s.questions or s.data) / "queries.jsonl"
    split = s.tuning if part == "tuning" and s.tuning else "test"
    data = load_beir(s.data, split, asked)
    ids = list(data.queries)
    if s.tuning is None and part != "all":
        tuning, held = halves(ids)
        ids = [q for q in ids if q in (tuning if part == "tuning" else held)]
    return {q: data.queries[q] for q in ids}, data.qrels, {file_name(d): d for d in data.corpus}


@dataclass
class Rule:
    where: str
    modes: tuple[str, ...] = ("hybrid",)  # the modes it can change
    settings: dict[str, Any] = field(default_factory=dict)  # "section.key" -> value
    patches: Callable[[], list[tuple[Any, str, Any]]] = list  # (object, attribute, replacement)

    @property
    def analyzer(self) -> bool:
        """Whether it changes the terms a passage is indexed under."""
        return "analyze" in self.where


def _same_language(self: Searcher, query: str, lists: Any, reads: Any = None) -> bool:
    return False


def _no_ramp(
    settings: Any, coverage: float, other_language: bool = False, model_weight: float = 0.3
) -> dict[str, float]:
    base = model_weight if settings.semantic_weight is None else settings.semantic_weight
    share = max(base, settings.semantic_weight_uncovered) if other_language else base
    return {"keyword": 1 - share, "semantic": share}


class _Unstemmed:
    def stemWords(self, words: list[str]) -> list[str]:  # PyStemmer's name
        return list(words)


def _no_extra_languages() -> list[tuple[Any, str, Any]]:
    told = CorpusLanguages.__call__

    def none(self: CorpusLanguages) -> tuple[str, ...]:
        told(self)  # every() (respelling) still reads the counts
        return ()

    return [(CorpusLanguages, "__call__", none)]


def _alike_lists_count_for_nothing() -> list[tuple[Any, str, Any]]:
    fuse = fusion.zscore_combination

    def without(lists: Any, weights: Any, lone_scale: float = 1.0) -> Any:
        # before the rule: a list whose scores are all alike (one hit) standardised to 0, floor too
        kept = {n: r for n, r in lists.items() if len({s for _, s in r}) > 1}
        alike = {item for n, r in lists.items() if n not in kept for item, _ in r}
        fused = fuse(kept, weights, lone_scale) if kept else []
        have = {item for item, _ in fused}
        return fused + [(item, 0.0) for item in sorted(alike - have)]

    return [(fusion, "zscore_combination", without)]


KW = ("keyword", "hybrid")
RULES: dict[str, Rule] = {
    "long-statement lean": Rule(
        "search/fusion.py long_query_share",
        patches=lambda: [(searcher_module, "long_query_share", lambda share, terms: share)],
    ),
    "cross-language switch": Rule(
        "search/searcher.py other_language", patches=lambda: [(Searcher, "other_language", _same_language)]
    ),
    "low-coverage lean": Rule(
        "search/fusion.py fusion_weights", patches=lambda: [(fusion, "fusion_weights", _no_ramp)]
    ),
    "keyword lead": Rule("search/fusion.py keyword_lead", settings={"search.keyword_lead": False}),
    "lone-hit coverage scale": Rule(
        "search/fusion.py lone_scale", patches=lambda: [(fusion, "lone_scale", lambda c: 1.0)]
    ),
    "lone hit counts": Rule("search/fusion.py zscore_combination", patches=_alike_lists_count_for_nothing),
    "dense feedback": Rule("search/feedback.py", settings={"search.dense_feedback": False}),
    "bare headings last": Rule(
        "search/headings.py", KW, patches=lambda: [(hydrate_module, "bare_headings_last", lambda w, c, k: w)]
    ),
    "respelling": Rule(
        "search/respell.py", KW, patches=lambda: [(searcher_module, "respelled", lambda a, q, t, *_: t)]
    ),
    "accent alternatives": Rule(
        "search/accents.py", KW, patches=lambda: [(searcher_module, "accent_alternatives", lambda *a: {})]
    ),
    "index languages for undecided queries": Rule(
        "search/corpus_languages.py", KW, patches=_no_extra_languages
    ),
    "unaccented spellings": Rule("analyze: analyzer.py _unaccented_stems", KW, {"analyze.unaccented": False}),
    "hyphen-closed spellings": Rule(
        "analyze: _scripts.py HYPHENATED_RE",
        KW,
        patches=lambda: [(analyzer_module, "HYPHENATED_RE", re.compile("(?!)"))],
    ),
    "whole codes": Rule(
        "analyze: _scripts.py COMPOUND_RE, SUFFIXED_RE",
        KW,
        patches=lambda: [(analyzer_module, n, re.compile("(?!)")) for n in ("COMPOUND_RE", "SUFFIXED_RE")],
    ),
    "Tagalog stemmer": Rule(
        "analyze: tagalog.py", KW, patches=lambda: [(analyzer_module, "TagalogStemmer", _Unstemmed)]
    ),
    "German decompounding": Rule("analyze: compounds.py", KW, {"analyze.decompound": False}),
    "Chinese function characters": Rule(
        "analyze: stopwords.py CJK_STOPWORDS",
        KW,
        patches=lambda: [(analyzer_module, "CJK_STOPWORDS", frozenset())],
    ),
    "stop lists": Rule("analyze: stopwords.py", KW, {"analyze.stopwords": False}),
    "language vote (detect)": Rule("analyze: languages.py", KW, {"analyze.detect": False}),
}

# rules deleted after a run of this script (where they were, how they went): their rows stay
GONE = {
    "question weight": ("search/fusion.py dense_share", "6b6903d"),
    "leader's stems when undecided": ("analyze: analyzer.py _languages", "analyzer v10"),
    "second vote": ("analyze: analyzer.py _vote_for", "analyzer v11"),
    "lone-hit cap": ("search/fusion.py LONE_CAP", "the coverage scale in every language"),
    "lone-hit cap, the coverage scale instead": ("search/fusion.py LONE_CAP", "as the row above"),
    "respelling without accents": ("search/respell.py _tiers", "accent alternatives do its job"),
}

# the test that searches an index for the user-visible case a rule fixes
NAMED = {
    "cross-language switch": "test_hybrid_search_crosses_languages_on_the_sample_corpus",
    "low-coverage lean": "test_an_english_question_finds_the_german_page_over_one_shared_word",
    "lone-hit coverage scale": "test_an_english_question_finds_the_german_page_over_one_shared_word",
    "lone hit counts": "test_a_single_keyword_hit_counts_in_the_fusion",
    "bare headings last": "test_heading_only_chunk_ranks_after_chunks_with_text",
    "respelling": "test_a_word_of_the_index_fifth_language_finds_its_page",
    "accent alternatives": "test_an_accented_query_finds_pages_written_either_way",
    "index languages for undecided queries": "test_a_few_words_find_passages_in_a_language_not_configured",
    "unaccented spellings": "test_a_word_typed_another_way_finds_the_page[accents]",
    "hyphen-closed spellings": "test_a_word_typed_another_way_finds_the_page[hyphens]",
    "whole codes": "test_cpp_and_csharp_are_terms_not_the_letter_c",
    "German decompounding": "test_german_compound_query_finds_the_page_with_the_other_compound",
    "Chinese function characters": "test_chinese_question_finds_the_answer_not_the_page_of_question_words",
}


def rule_of(name: str) -> Rule | None:
    """The rule ``name``, or for "A + B" those rules together; None for the baseline. A deleted
    rule (GONE) is a rule with nothing left to switch off: its results are kept, not rerun."""
    if name == "baseline":
        return None
    parts = [RULES.get(n) or Rule(f"{GONE[n][0]}, deleted") for n in name.split(" + ")]
    return Rule(
        " + ".join(r.where for r in parts),
        tuple(dict.fromkeys(m for r in parts for m in r.modes)),
        {k: v for r in parts for k, v in r.settings.items()},
        lambda: [patch for r in parts for patch in r.patches()],
    )


@contextlib.contextmanager
def switched_off(name: str) -> Iterator[None]:
    """The rule ``name`` off (with a fingerprint of its own, so a copied index is re-analysed)."""
    rule = rule_of(name)
    assert rule is not None
    patches = list(rule.patches())
    if rule.analyzer and not rule.settings:
        fingerprint = Analyzer.fingerprint
        tag = re.sub(r"\W+", "-", name)
        patches.append((Analyzer, "fingerprint", property(lambda self: f"{fingerprint.fget(self)}-{tag}")))
    saved = [(obj, attr, getattr(obj, attr)) for obj, attr, _ in patches]
    for obj, attr, value in patches:
        setattr(obj, attr, value)
    try:
        yield
    finally:
        for obj, attr, value in reversed(saved):
            setattr(obj, attr, value)


class Vectors:
    """Query vectors kept on disk: a rerun (and every rule) embeds each query once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.kept: dict[str, Any] = pickle.loads(path.read_bytes()) if path.exists() else {}
        self.new = 0

    def wrap(self, embed: Callable[[str], Any]) -> Callable[[str], Any]:
        def cached(text: str) -> Any:
            if text not in self.kept:
                self.kept[text], self.new = embed(text), self.new + 1
            return self.kept[text]

        return cached

    def save(self) -> None:
        if self.new:
            self.path.write_bytes(pickle.dumps(self.kept))
            self.new = 0


def settings_for(index: Path, rule: Rule | None) -> Settings:
    settings = load_settings()
    settings.store.data_dir = index
    settings.embed.model = "e5"
    settings.search.parallel_query = False  # the same hits; no thread to wait on
    for key, value in (rule.settings if rule else {}).items():
        section, attr = key.split(".")
        setattr(getattr(settings, section), attr, value)
    return settings


def score(rt: Stages, s: Set, part: str, modes: tuple[str, ...]) -> dict[str, dict[str, float]]:
    asked, qrels, names = queries(s, part)
    searcher = rt.searcher()
    flt = SearchFilter(collections=("eval",))
    out: dict[str, dict[str, float]] = {}
    for mode in modes:
        got = out[mode] = {}
        for qid, text in asked.items():
            for k in (HITS, HITS * 10 // 3):
                hits = searcher.search(text, k=k, mode=mode, flt=flt, snippets=False).hits  # type: ignore[arg-type]
                ranked = doc_ranking((Path(h.path).name for h in hits), names.get)
                if len(ranked) >= 10 or len(hits) < k:
                    break
            got[qid] = ndcg_at(ranked, qrels.get(qid, {}))
    return out


def run(args: argparse.Namespace) -> None:
    if deleted := [n for name in args.rules or () for n in name.split(" + ") if n in GONE]:
        sys.exit(f"{', '.join(deleted)}: deleted, nothing to switch off (its figures stay in --results)")
    results: dict[str, Any] = json.loads(args.results.read_text()) if args.results.exists() else {}
    vectors = Vectors(args.work / "query-vectors.pkl")
    embedder = Stages(settings_for(args.work, None)).embedder  # one model for every index
    embedder.embed_query = vectors.wrap(embedder.embed_query)  # type: ignore[method-assign]
    chosen = [s for s in sets(args.eval_data, args.bible) if not args.sets or s.label in args.sets]
    for name in args.rules or ["baseline", *RULES]:
        rule = rule_of(name)
        modes = tuple(args.modes) if rule is None else rule.modes
        started, load = time.time(), os.getloadavg()[0]
        with switched_off(name) if rule else contextlib.nullcontext():
            for s in chosen:
                done = results.get(name, {}).get(s.label, {})
                todo = tuple(m for m in modes if m not in done)
                if not todo:
                    continue
                index = args.work / f"e5-{s.index}" / "index"
                if rule and rule.analyzer:
                    copy = args.work / "ablate" / f"e5-{s.index}" / "index"
                    shutil.rmtree(copy.parent, ignore_errors=True)
                    shutil.copytree(index, copy)
                    index = copy
                with Stages(settings_for(index, rule), embedder) as rt:
                    if rule and rule.analyzer:
                        rt.store.rebuild_keyword_index(None)
                    got = score(rt, s, args.part, todo)
                results.setdefault(name, {}).setdefault(s.label, {}).update(got)
                args.results.write_text(json.dumps(results))
                vectors.save()
                means = ", ".join(f"{m} {sum(v.values()) / max(1, len(v)):.4f}" for m, v in got.items())
                print(f"{name} | {s.label}: {means}", file=sys.stderr, flush=True)
            shutil.rmtree(args.work / "ablate", ignore_errors=True)
        print(
            f"{name}: {time.time() - started:.0f} s, load {load:.1f} -> {os.getloadavg()[0]:.1f}",
            file=sys.stderr,
        )


def gains(results: dict[str, Any], name: str, mode: str) -> dict[str, Any]:
    """Set -> the per-query gains of rule ``name`` (on - off) in ``mode``, paired by query id."""
    import numpy as np

    base, off = results["baseline"], results.get(name, {})
    out = {}
    for label, modes in off.items():
        if mode in modes and mode in base.get(label, {}):
            ids = sorted(modes[mode])
            out[label] = np.array([base[label][mode][q] - modes[mode][q] for q in ids])
    return out


def bootstrap(per_set: dict[str, Any]) -> tuple[float, float, float, dict[str, tuple[float, float, float]]]:
    """(mean over sets, its 95% CI low, high), and each set's (mean, low, high)."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    draws, each = [], {}
    for label, d in per_set.items():
        means = d[rng.integers(0, len(d), size=(B, len(d)))].mean(axis=1)
        draws.append(means)
        each[label] = (float(d.mean()), *map(float, np.percentile(means, [2.5, 97.5])))
    overall = np.mean(draws, axis=0)
    mean = float(np.mean([d.mean() for d in per_set.values()]))
    lo, hi = np.percentile(overall, [2.5, 97.5])
    return mean, float(lo), float(hi), each


def table(args: argparse.Namespace) -> None:
    results = json.loads(args.results.read_text())
    print(
        "| rule off (where) | hybrid gain, mean [95% CI] | costs most | helps most | keyword gain | stays? |"
    )
    print("|---|---|---|---|---|---|")
    together = {n: rule_of(n) for n in results if " + " in n and n in (args.together or [n])}
    gone = {n: rule_of(n) for n in GONE}
    for name, rule in [*RULES.items(), *gone.items(), *together.items()]:
        assert rule is not None
        per_set = gains(results, name, "hybrid")
        if not per_set:
            continue
        mean, lo, hi, each = bootstrap(per_set)
        worst = min(each, key=lambda k: each[k][0])
        best = max(each, key=lambda k: each[k][0])
        kw = gains(results, name, "keyword")
        kw_text = "(hybrid only)" if not kw else "{:+.4f} [{:+.4f}, {:+.4f}]".format(*bootstrap(kw)[:3])
        if kw:
            kw_worst = min(bootstrap(kw)[3].values())[0]
            kw_text += f", worst {kw_worst:+.4f}"
        if name in GONE:
            verdict = f"deleted: {GONE[name][1]}"
        elif all(n in GONE for n in name.split(" + ")):
            verdict = "deleted, all of them"
        elif mean >= 0.003 and each[worst][0] >= -0.005:
            verdict = "earns"
        elif name in NAMED:
            verdict = f"stays: `{NAMED[name]}`"
        elif each[best][0] > 0.005:
            verdict = f"stays: off costs {best} more than 0.005"
        else:
            verdict = "goes"
        cell = "{} {:+.4f} [{:+.4f}, {:+.4f}]"
        print(
            f"| {name} ({rule.where}) | {mean:+.4f} [{lo:+.4f}, {hi:+.4f}] | "
            f"{cell.format(worst, *each[worst])} | {cell.format(best, *each[best])} | {kw_text} | "
            f"{verdict} |"
        )
    if args.detail:
        for name in RULES:
            for mode in ("hybrid", "keyword"):
                for label, (m, lo, hi) in (
                    bootstrap(gains(results, name, mode))[3].items() if gains(results, name, mode) else []
                ):
                    print(f"{name}\t{mode}\t{label}\t{m:+.4f}\t[{lo:+.4f}, {hi:+.4f}]")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("--work", type=Path, required=True)
    r.add_argument("--bible", type=Path, required=True)
    r.add_argument("--eval-data", type=Path, default=ROOT.parent / "shared" / "eval-data")
    r.add_argument("--rules", nargs="*", help=f"baseline, {', '.join(RULES)}; 'A + B': both off at once")
    r.add_argument("--sets", nargs="*")
    r.add_argument("--part", choices=("held", "tuning", "all"), default="held")
    r.add_argument("--modes", nargs="*", default=["keyword", "hybrid"], help="the baseline's")
    r.add_argument("--results", type=Path, default=Path("ablation.json"))
    t = sub.add_parser("table")
    t.add_argument("--results", type=Path, default=Path("ablation.json"))
    t.add_argument("--detail", action="store_true", help="every set's gains too")
    t.add_argument("--together", nargs="*", help="only these 'A + B' rows (default: every one run)")
    args = p.parse_args()
    run(args) if args.what == "run" else table(args)


if __name__ == "__main__":
    main()
