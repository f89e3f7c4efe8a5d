"""Fit the search confidence (search/confidence.py) on train/dev qrels and write its coefficients.

    python bench/fit_confidence.py \\
        --run scifact:train:/tmp/eval/e5-scifact --run nfcorpus:dev:/tmp/eval/e5-nfcorpus \\
        --check scifact:test:/tmp/eval/e5-scifact [--write]

Each ``--run SET:SPLIT:WORKDIR`` names an eval set (a shared one by name, or a folder), a train/dev
split, or ``tuning`` (the seeded half of the test queries that bench/ablate.py tunes on), and a
workdir kept by `docshelf eval --workdir` (its index is reused: nothing is embedded again). Every
query of the split is searched through the real Searcher in each mode (k=10); a hit is labelled
relevant when its document has a positive qrel. One logistic regression per mode (L2, Newton
steps) is fitted on the pooled hits, printed, and with ``--write`` stored in
src/docshelf/search/confidence.json. ``--check`` measures calibration on other splits (test, or
``held``: the other half; measured, never fitted on), of the model's own scores and of the
confidences as a result list shows them (each capped by the one above it, confidence.in_order).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from ablate import halves

from docshelf.config import load_settings
from docshelf.search.confidence import FEATURES, FIT_PATH, in_order, vector
from docshelf.search.evaluate import file_name, load_beir
from docshelf.testing import Stages

MODES = ("hybrid", "keyword", "semantic")


Pooled = dict[str, tuple[list[list[float]], list[int], list[int]]]  # features, labels, query


def collect(spec: str, model: str, max_queries: int) -> tuple[str, Pooled]:
    """The model's name, and features and labels of the top-10 hits of each query, per mode."""
    name, split, workdir = spec.split(":", 2)
    folder = (
        Path(name)
        if Path(name).is_dir()
        else Path(os.environ.get("EVAL_DATA", "/work/shared/eval-data")) / name
    )
    data = load_beir(folder, "test" if split in ("tuning", "held") else split)
    if split in ("tuning", "held"):
        tuning, held = halves(list(data.queries))
        data.queries = {q: t for q, t in data.queries.items() if q in (tuning if split == "tuning" else held)}
    names = {file_name(d): d for d in data.corpus}
    settings = load_settings()
    settings.store.data_dir = Path(workdir) / "index"
    settings.embed.model = model
    out: Pooled = {m: ([], [], []) for m in MODES}
    with Stages(settings) as rt:
        embedder_name = rt.embedder.name
        searcher = rt.searcher()
        queries = [q for q in data.queries if data.qrels.get(q)][:max_queries]
        for n, qid in enumerate(queries):
            rels = data.qrels[qid]
            for mode in MODES:
                for hit in searcher.search(data.queries[qid], k=10, mode=mode).hits:  # type: ignore[arg-type]
                    doc = names.get(hit.path.rsplit("/", 1)[-1])
                    assert hit.evidence is not None
                    out[mode][0].append(vector(hit.evidence))
                    out[mode][1].append(int(rels.get(doc or "", 0) > 0))
                    out[mode][2].append(n)
    print(f"# {spec}: {len(queries)} queries", file=sys.stderr)
    return embedder_name, out


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 50) -> tuple[float, list[float]]:
    """Logistic regression by Newton-Raphson (IRLS) with an L2 penalty on the weights (not the bias)."""
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    penalty = np.eye(a.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(a @ w)))
        grad = a.T @ (p - y) + penalty @ w
        hess = (a * (p * (1 - p))[:, None]).T @ a + penalty
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), [float(v) for v in w[1:]]


def calibration(pred: np.ndarray, y: np.ndarray) -> tuple[float, float, list[str]]:
    """Log-loss, expected calibration error and a 5-bin table (predicted vs observed)."""
    eps = 1e-9
    loss = float(-np.mean(y * np.log(pred + eps) + (1 - y) * np.log(1 - pred + eps)))
    bins = np.clip((pred * 5).astype(int), 0, 4)
    ece, rows = 0.0, []
    for b in range(5):
        sel = bins == b
        if sel.any():
            ece += sel.mean() * abs(pred[sel].mean() - y[sel].mean())
            span = f"{b / 5:.1f}-{(b + 1) / 5:.1f}"
            rows.append(f"{span}: n={int(sel.sum())} pred={pred[sel].mean():.2f} obs={y[sel].mean():.2f}")
    return loss, float(ece), rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", action="append", required=True, help="SET:SPLIT:WORKDIR to fit on (train/dev)")
    p.add_argument("--check", action="append", default=[], help="SET:SPLIT:WORKDIR to measure calibration on")
    p.add_argument("--model", default="e5")
    p.add_argument("--max-queries", type=int, default=300)
    p.add_argument("--write", action="store_true", help=f"store the fit in {FIT_PATH}")
    args = p.parse_args()
    if any(spec.split(":")[1] in ("test", "held") for spec in args.run):
        p.error("never fit on held queries: use train, dev or tuning with --run (test, held go to --check)")
    print(f"$ python {' '.join(sys.argv)}")
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, load {os.getloadavg()}")
    started = time.perf_counter()
    pooled: Pooled = {m: ([], [], []) for m in MODES}
    model_name = ""
    for spec in args.run:
        model_name, got = collect(spec, args.model, args.max_queries)
        for mode, (x, y, _) in got.items():
            pooled[mode][0].extend(x)
            pooled[mode][1].extend(y)
    fits: dict[str, dict[str, Any]] = {}
    anymodel: dict[str, dict[str, Any]] = {}
    for mode in MODES:
        x, y = np.array(pooled[mode][0]), np.array(pooled[mode][1], dtype=float)
        # for other models ("*"): without the cosine, whose scale is the model's own
        blind = x.copy()
        blind[:, FEATURES.index("semantic_score")] = 0.0
        b_intercept, b_weights = fit(blind, y)
        anymodel[mode] = {"intercept": round(b_intercept, 5), "weights": [round(w, 5) for w in b_weights]}
        intercept, weights = fit(x, y)
        pred = 1 / (1 + np.exp(-(intercept + x @ np.array(weights))))
        loss, ece, rows = calibration(pred, y)
        print(f"\n## {mode}: {len(y)} hits, {int(y.sum())} relevant; log-loss {loss:.3f}, ECE {ece:.3f}")
        named = dict(zip(FEATURES, (round(w, 4) for w in weights), strict=True))
        print("intercept", round(intercept, 4), named)
        print("\n".join("  " + r for r in rows))
        fits[mode] = {"intercept": round(intercept, 5), "weights": [round(w, 5) for w in weights]}
    for spec in args.check:
        for mode, (x, y, query) in collect(spec, args.model, args.max_queries)[1].items():
            fitted = fits[mode]
            pred = 1 / (1 + np.exp(-(fitted["intercept"] + np.array(x) @ np.array(fitted["weights"]))))
            loss, ece, rows = calibration(pred, np.array(y, dtype=float))
            # as a result list shows them: hits come in rank order, query by query
            shown = np.concatenate([in_order(list(pred[np.array(query) == q])) for q in sorted(set(query))])
            s_loss, s_ece, _ = calibration(shown, np.array(y, dtype=float))
            print(f"\n## check {spec} {mode}: {len(y)} hits; log-loss {loss:.3f}, ECE {ece:.3f}; "
                  f"in order: {s_loss:.3f}, {s_ece:.3f}")  # fmt: skip
            print("\n".join("  " + r for r in rows))
    if args.write:
        doc = {
            "features": list(FEATURES),
            "fitted_on": args.run,
            "command": " ".join(sys.argv),
            "fits": {f"{model_name}/{m}": f for m, f in fits.items()}
            | {f"*/{m}": f for m, f in anymodel.items()},
        }
        FIT_PATH.write_text(json.dumps(doc, indent=1) + "\n", "utf-8")
        print(f"\nwrote {FIT_PATH}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
