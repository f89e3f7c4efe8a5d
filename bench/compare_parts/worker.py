"""One measurement in its own process: `python worker.py JOB.json RESULT.json`.

A fresh process per system and data set keeps peak RSS honest (ru_maxrss of this process only)
and lets the reference systems run in the bench venv while docshelf runs in its own interpreter.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import read_json, sentence_pool, synthetic_chunks, write_json


def run(job: dict[str, Any]) -> dict[str, Any]:
    system = job["system"]
    if system == "docshelf":
        import docshelf_system as impl
    elif system == "chroma-minilm":
        import chroma_setup as impl  # type: ignore[no-redef]
    else:
        import lexical as impl  # type: ignore[no-redef]
    if job["kind"] == "scale":
        units = list(synthetic_chunks(sentence_pool(Path(job["pool"])), job["chunks"]))
        return impl.run_scale(job, units)
    if job["kind"] == "throughput":
        return impl.run_throughput(job)
    return impl.run_eval(job)


def main() -> None:
    job = read_json(Path(sys.argv[1]))
    try:
        result = run(job)
    except Exception as exc:  # reported in the table, not fatal for the whole run
        traceback.print_exc()
        result = {"error": f"{type(exc).__name__}: {exc}"}
    write_json(Path(sys.argv[2]), result)


if __name__ == "__main__":
    main()
