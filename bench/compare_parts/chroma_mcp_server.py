"""A stand-in for the seed server "mcp-rag-server" (Chroma + all-MiniLM-L6-v2 over stdio MCP).

Runs in the bench venv. Its code is not available here, so this reproduces its shape only: chromadb
and the MCP SDK imported at start, the model loaded lazily on the first search, one
`search_documents` tool. `--build FOLDER` first indexes FOLDER's .md/.txt files into --path.

    python chroma_mcp_server.py --path DIR [--build FOLDER]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chroma_setup import MiniLM, add_all, open_collection
from common import word_chunks
from mcp.server.mcpserver import MCPServer


def build(folder: Path, path: Path) -> None:
    ids, texts, metas = [], [], []
    for f in sorted(folder.rglob("*")):
        if f.suffix in {".md", ".txt"} and f.is_file():
            for n, chunk in enumerate(word_chunks(f.read_text(encoding="utf-8"))):
                ids.append(f"{f.name}#{n}")
                texts.append(chunk)
                metas.append({"source": f.name})
    add_all(open_collection(path), ids, MiniLM().embed(texts), texts, metas)


def serve(path: Path) -> None:
    collection = open_collection(path, create=False)
    model: list[MiniLM] = []
    server = MCPServer("chroma-minilm-standin")

    def search_documents(query: str, n_results: int = 5) -> list[dict[str, Any]]:
        """Semantic search over the ingested documents."""
        if not model:
            model.append(MiniLM())
        res = collection.query(query_embeddings=model[0].embed([query]), n_results=n_results)
        return [
            {"text": d, "source": m["source"], "distance": s}
            for d, m, s in zip(res["documents"][0], res["metadatas"][0], res["distances"][0], strict=True)
        ]

    server.add_tool(search_documents)
    server.run("stdio")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--path", type=Path, required=True)
    p.add_argument("--build", type=Path)
    args = p.parse_args()
    if args.build:
        build(args.build, args.path)
    else:
        serve(args.path)


if __name__ == "__main__":
    main()
