"""Indexing throughput on one core and on both: docshelf with e5 next to Chroma + all-MiniLM-L6-v2.

docshelf uses both cores through ``embed.workers`` (texts embedded at once over one onnxruntime
session); the Chroma setup through onnxruntime's intra-op threads over its batches, its own way.
The load average is taken before and after each job (speedups are only meaningful on a quiet
machine).
"""

from __future__ import annotations

import os
from typing import Any

Row = dict[str, Any]
SYSTEMS = {"docshelf": "docshelf (e5)", "chroma-minilm": "Chroma + all-MiniLM-L6-v2"}


def jobs(corpus: str, systems: list[str]) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, interpreter kind, job): each system on 1 and 2 cores."""
    out = []
    for system, label in SYSTEMS.items():
        wanted = "docshelf-e5" if system == "docshelf" else system
        if wanted not in systems:
            continue
        kind = "docshelf" if system == "docshelf" else "bench"
        for cores in (1, 2):
            job = {"kind": "throughput", "system": system, "corpus": corpus, "cores": cores, "model": "e5"}
            out.append((label, kind, job))
    return out


def row(label: str, job: dict[str, Any], result: dict[str, Any], load_before: float) -> Row:
    if "error" in result:
        return {"system": label, "cores": job["cores"], "error": result["error"]}
    return {
        "system": label, "cores": job["cores"], "docs": result["docs"], "chunks": result["units"],
        "seconds": result["index_s"], "load": (load_before, os.getloadavg()[0]),
    }  # fmt: skip


def table(rows: list[Row]) -> str:
    out = [
        "| system | cores | documents | chunks | index s | docs/s | chunks/s | vs 1 core "
        "| load before/after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    one = {r["system"]: r["chunks"] / r["seconds"] for r in rows if "error" not in r and r["cores"] == 1}
    for r in rows:
        if "error" in r:
            out.append(f"| {r['system']} | {r['cores']} | failed: {r['error'][:100]} | | | | | | |")
            continue
        rate = r["chunks"] / r["seconds"]
        ratio = f"{rate / one[r['system']]:.2f}x" if r["system"] in one else ""
        out.append(
            f"| {r['system']} | {r['cores']} | {r['docs']} | {r['chunks']} | {r['seconds']:.0f} | "
            f"{r['docs'] / r['seconds']:.1f} | {rate:.1f} | {ratio} | "
            f"{r['load'][0]:.2f} / {r['load'][1]:.2f} |"
        )
    return "\n".join(out)
