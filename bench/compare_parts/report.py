"""Tables and the docs/benchmarks.md section of a compare run (every figure comes from the run)."""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {mem_kb / 1024**2:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        mem = ""
    blas = os.environ.get("OPENBLAS_CORETYPE")
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}, Linux {platform.release()}, Python {platform.python_version()}"
        + (f", OPENBLAS_CORETYPE={blas}" if blas else "")
    )


def _mb(n: float | None) -> str:
    return "" if n is None else f"{n / 1e6:.1f}"


def quality_table(rows: list[Row]) -> str:
    out = [
        "| set | system | mode | nDCG@10 | recall@100 | index docs/s | p50 ms | p95 ms | peak RSS MB "
        "| disk MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['set']} | {r['system']} | | failed: {r['error'][:120]} | | | | | | |")
            continue
        out.append(
            f"| {r['set']} | {r['system']} | {r['mode']} | {r['ndcg10']:.4f} | {r['recall100']:.4f} | "
            f"{r['docs_per_s']:.1f} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['peak_rss_mb']:.0f} | "
            f"{_mb(r['disk_bytes'])} |"
        )
    return "\n".join(out)


def summary_table(rows: list[Row], sets: list[str]) -> str:
    """nDCG@10: one row per system and mode, one column per set."""
    names: list[str] = []
    cells: dict[tuple[str, str], str] = {}
    for r in rows:
        name = f"{r['system']}: {r['mode'].split(' (')[0]}" if "mode" in r else r["system"]
        if name not in names:
            names.append(name)
        cells[(name, r["set"])] = "failed" if "error" in r else f"{r['ndcg10']:.3f}"
    out = ["| nDCG@10 | " + " | ".join(sets) + " |", "|---|" + "---|" * len(sets)]
    out += [f"| {n} | " + " | ".join(cells.get((n, s), "") for s in sets) + " |" for n in names]
    return "\n".join(out)


def scale_table(rows: list[Row]) -> str:
    out = [
        "| chunks | system | build s | keyword p50 / p95 ms | vector p50 / p95 ms | hybrid p50 / p95 ms | "
        "peak RSS MB | disk MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['chunks']:,} | {r['system']} | failed: {r['error'][:120]} | | | | | |")
            continue
        lat = [f"{r[m][0]:.1f} / {r[m][1]:.1f}" if m in r else "" for m in ("keyword", "vector", "hybrid")]
        out.append(
            f"| {r['units']:,} | {r['system']} | {r['build_s']:.0f} | {' | '.join(lat)} | "
            f"{r['peak_rss_mb']:.0f} | {_mb(r['disk_bytes'])} |"
        )
    return "\n".join(out)


def cold_table(rows: list[Row]) -> str:
    out = [
        "| server | start -> tools/list ms | start -> first search answered ms | import | import ms |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['server']} | failed: {r['error'][:120]} | | | |")
        else:
            out.append(
                f"| {r['server']} | {r['tools_list_ms']:.0f} | {r['first_search_ms']:.0f} | "
                f"`import {r['import']}` | {r['import_ms']:.0f} |"
            )
    return "\n".join(out)


def write_section(path: Path, key: str, text: str) -> None:
    start, end = f"<!-- compare:{key} -->", f"<!-- /compare:{key} -->"
    block = f"{start}\n{text.strip()}\n{end}"
    doc = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    # markers count only on lines of their own (the prose around them may quote them)
    pattern = re.compile("^" + re.escape(start) + "$.*?^" + re.escape(end) + "$", re.S | re.M)
    doc = pattern.sub(lambda _: block, doc) if pattern.search(doc) else doc.rstrip() + "\n\n" + block + "\n"
    path.write_text(doc, encoding="utf-8")
