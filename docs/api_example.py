"""The example of docs/api.md: index the sample corpus, search it, read around the best hit.

    python docs/api_example.py [DATA_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from docshelf import Shelf, load_settings

ROOT = Path(__file__).resolve().parents[1]


def main(data_dir: Path) -> None:
    settings = load_settings()
    settings.store.data_dir = data_dir
    with Shelf(settings) as shelf:
        report = shelf.index([ROOT / "samples" / "corpus"])
        print(report.sync.collection, len(report.sync.added), "added")

        result = shelf.search("how do we page someone for a sev-1", k=3)
        for hit in result.hits:
            print(f"{hit.score:.3f} {hit.citation}  {' > '.join(hit.heading_path)}")

        best = result.hits[0]
        window = shelf.read_passage(best.chunk_id, before=1, after=1)
        for passage in window.passages:
            print(passage.citation, passage.chunk.text[:80].replace("\n", " "))

        lines = shelf.read_range(best.path, lines=(best.line_start, best.line_end))
        print(lines.citation, lines.source)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="docshelf-api-")))
