"""A learned per-query fusion weight, scored against the shipped rule (measured, not kept).

    python bench/tune_guard.py --work W --cache /tmp/a.pkl --sets "scifact train" "nfcorpus dev" \
        xquad-de xquad-zh
    python bench/tune_guard.py --work W2 --cache /tmp/b.pkl --sets none \
        --set-dirs BIBLE/bible-*:dev BIBLE/bible-*:test
    python bench/tune_guard.py --work W --cache /tmp/c.pkl --sets "scifact test" "nfcorpus test"
    python bench/tune_learned_fusion.py /tmp/a.pkl /tmp/b.pkl /tmp/c.pkl

From tune_guard's recorded candidate lists, each query's nDCG@10 is computed for semantic shares
0, 0.025, ..., 1 (z-score fusion). The learned rule moves the shipped rule's share in logit space
by a linear function of ten per-query features (both lists' top z-scores, their ratio and gaps,
whether each list's first hit is in the other, the dense top cosine, the coverage, the keyword
list's length), fitted by random search on the tuning splits (scifact train, nfcorpus dev, the
XQuAD questions, the Bible dev questions; one group each, equal weight). Cross-language and
uncovered queries keep the shipped rule. Leave-one-group-out fits tell whether it generalises.
"""

from __future__ import annotations

import math
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tune_guard import docs_of, query_weight

from docshelf.config import load_settings
from docshelf.search.evaluate import ndcg_at
from docshelf.search.fusion import fuse_hybrid, hybrid_weights, zscore_combination

STEP = 0.025
GRID = np.round(np.arange(0, 1 + 1e-9, STEP), 3)
MONO = ["de", "en", "es", "fr", "it", "tl"]
GROUPS = {
    "scifact": ["scifact train"], "nfcorpus": ["nfcorpus dev"], "xquad-de": ["xquad-de"],
    "xquad-zh": ["xquad-zh"], "bible": [f"bible-{s} dev" for s in MONO],
}  # fmt: skip
TEST = ["scifact test", "nfcorpus test"] + [f"bible-{s} test" for s in MONO]


def _z(ranked: list[tuple[str, float]]) -> np.ndarray[Any, Any]:
    s = np.array([x for _, x in ranked], dtype=float)
    return (s - s.mean()) / (s.std() or 1.0) if len(s) > 1 else np.zeros(len(s))


def features(kw: list[tuple[str, float]], sem: list[tuple[str, float]], coverage: float) -> list[float]:
    kz, sz = _z(kw), _z(sem)
    k1, s1 = (kz[0] if len(kz) else 0.0), (sz[0] if len(sz) else 0.0)
    kg = kz[0] - kz[1] if len(kz) > 1 else 0.0
    sg = sz[0] - sz[1] if len(sz) > 1 else 0.0
    krank = {c: i for i, (c, _) in enumerate(kw)}
    srank = {c: i for i, (c, _) in enumerate(sem)}
    in_kw = 1 / (1 + krank[sem[0][0]]) if sem and sem[0][0] in krank else 0.0
    in_sem = 1 / (1 + srank[kw[0][0]]) if kw and kw[0][0] in srank else 0.0
    ratio = math.log(max(k1, 0.1) / max(s1, 0.1))
    return [k1, s1, ratio, kg, sg, in_kw, in_sem, sem[0][1] if sem else 0.0, coverage, len(kw) / 300]


def prepare(caches: list[Path]) -> dict[str, dict[str, np.ndarray[Any, Any]]]:
    settings = load_settings().search
    out = {}
    for path in caches:
        for label, d in pickle.loads(path.read_bytes()).items():
            cd, rows = d["chunk_doc"], []
            for qid, kw, sem, coverage, other in d["rows"]:
                rel = d["qrels"].get(qid, {})
                if not rel:
                    continue
                lists = {"keyword": kw, "semantic": sem}
                base = query_weight(d, qid)
                w = hybrid_weights(settings, lists, coverage, other, base)
                shipped = ndcg_at(docs_of(fuse_hybrid(settings, lists, coverage, other, base), cd), rel, 10)
                grid = []
                for g in GRID:
                    fused = zscore_combination(lists, {"keyword": 1 - g, "semantic": g})
                    grid.append(ndcg_at(docs_of(fused, cd), rel, 10))
                share = w["semantic"] / (w["keyword"] + w["semantic"])
                rows.append((features(kw, sem, coverage), share, grid, shipped, other or coverage < 0.5))
            out[label] = {
                "x": np.array([r[0] for r in rows]), "share": np.array([r[1] for r in rows]),
                "grid": np.array([r[2] for r in rows]), "shipped": np.array([r[3] for r in rows]),
                "fixed": np.array([r[4] for r in rows]),
            }  # fmt: skip
            print(f"{label}: {len(rows)} queries", file=sys.stderr, flush=True)
    return out


def main() -> None:
    data = prepare([Path(p) for p in sys.argv[1:]])
    train = [label for labels in GROUPS.values() for label in labels]
    every = np.concatenate([data[label]["x"] for label in train])
    mu, sd = every.mean(0), every.std(0) + 1e-9

    def score(theta: np.ndarray[Any, Any], label: str) -> float:
        d = data[label]
        logit = np.log(np.clip(d["share"], 1e-3, 1 - 1e-3) / np.clip(1 - d["share"], 1e-3, 1))
        share = 1 / (1 + np.exp(-(logit + theta[0] + ((d["x"] - mu) / sd) @ theta[1:])))
        idx = np.clip(np.rint(share / STEP).astype(int), 0, len(GRID) - 1)
        return float(np.where(d["fixed"], d["shipped"], d["grid"][np.arange(len(idx)), idx]).mean())

    def fit(groups: dict[str, list[str]]) -> np.ndarray[Any, Any]:
        def objective(t: np.ndarray[Any, Any]) -> float:
            return float(np.mean([np.mean([score(t, label) for label in ls]) for ls in groups.values()]))

        rng = np.random.default_rng(0)
        best = np.zeros(every.shape[1] + 1)
        best_o, step = objective(best), 0.3
        for i in range(4000):
            cand = best + rng.normal(0, step, best.shape) * (rng.random(best.shape) < 0.3)
            if (o := objective(cand)) > best_o:
                best, best_o = cand, o
            if i % 1000 == 999:
                step /= 2
        return best

    theta = fit(GROUPS)
    print(f"{'set':16} {'share 0':>8} {'share 1':>8} {'shipped':>8} {'learned':>8}")
    for label in train + [t for t in TEST if t in data]:
        d = data[label]
        kw, sem = d["grid"][:, 0].mean(), d["grid"][:, -1].mean()
        print(f"{label:16} {kw:8.4f} {sem:8.4f} {d['shipped'].mean():8.4f} {score(theta, label):8.4f}")
    for group in ("xquad-de", "xquad-zh", "scifact", "nfcorpus"):
        held = fit({k: v for k, v in GROUPS.items() if k != group})
        got = ", ".join(f"{label} {score(held, label):.4f}" for label in GROUPS[group])
        print(f"fitted without {group}: {got}")


if __name__ == "__main__":
    main()
