"""The MCP tool ``ask_question``, registered only when ``answer.model`` is set.

The chat client is built per call (by ``Shelf.ask``), so a missing key or a stopped LLM server
never breaks start-up: the call answers ``isError`` with the setting to fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from docshelf.config import AnswerSettings, redact_dsn
from docshelf.errors import DocshelfError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from docshelf.shelf import Shelf

__all__ = ["AnswerOut", "register_answer_tool"]

ASK = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class AnswerPassage(_Out):
    number: int = Field(description="the [n] the answer cites")
    chunk_id: str = Field(description="pass to read_passage")
    path: str
    line_start: int
    line_end: int
    page: int | None
    location: str = Field(description="path:start-end, or path#page=N for paged files")
    citation: str
    heading_path: list[str]
    score: float
    text: str | None = Field(
        None, description="the whole passage (passages only; the LLM got its first answer.max_passage_chars)"
    )


class AnswerOut(_Out):
    question: str
    answer: str = Field(description="the LLM's answer with [n] citations; empty when nothing matched")
    model: str
    endpoint: str = Field(description="where the passages were sent")
    citations: list[AnswerPassage] = Field(description="cited passages in order of first mention")
    passages: list[AnswerPassage] = Field(description="every passage sent, most relevant first")
    retrieval_mode: str
    retrieval_ms: float
    llm_ms: float
    note: str | None = None
    unresolved: list[int] = Field(description="cited numbers that match no passage")
    untrusted_content: str


def endpoint_of(settings: AnswerSettings) -> str:
    """Where answers are computed, for the tool description (never raises)."""
    return redact_dsn(settings.base_url())


def register_answer_tool(server: MCPServer, shelf: Shelf) -> None:
    """Add ``ask_question``; its description names the model and endpoint passages are sent to."""
    from docshelf.server.calls import UNTRUSTED, off_loop
    from docshelf.server.limits import fit_items, tool_result
    from docshelf.shelf import join_notes

    cfg = shelf.settings.answer
    where = endpoint_of(cfg)

    async def ask_question(
        question: Annotated[
            str, Field(min_length=1, max_length=4000, description="the question, any language")
        ],
        passages: Annotated[
            int | None, Field(ge=1, le=30, description="passages to send (default: setting)")
        ] = None,
        collections: Annotated[list[str] | None, Field(description="only these collections")] = None,
        path_glob: Annotated[
            str | None, Field(description="fnmatch glob on the path, e.g. 'runbooks/*'")
        ] = None,
        tags: Annotated[list[str] | None, Field(description="documents with any of these tags")] = None,
        rerank: Annotated[
            bool | None, Field(description="cross-encoder rerank first (default: setting)")
        ] = None,
    ) -> Annotated[CallToolResult, AnswerOut]:
        wait = shelf.settings.server.model_wait_s
        try:
            result = await off_loop(
                shelf,
                lambda: shelf.ask(
                    question, passages=passages, collections=tuple(collections or ()), path_glob=path_glob,
                    tags=tuple(tags or ()), rerank=rerank, model_wait_s=wait,
                ),
            )  # fmt: skip
        except DocshelfError as exc:
            raise ToolError(str(exc)) from exc
        payload = result.as_dict()
        for c in payload["citations"]:
            c.pop("text")  # the same passage is in "passages" with its text
        payload["untrusted_content"] = UNTRUSTED
        kept = fit_items(payload, "passages", shelf.settings.server.max_result_tokens)
        if kept < len(result.passages):
            cut = f"{len(result.passages) - kept} passages left out of this result to stay under the size cap"
            payload["note"] = join_notes(payload["note"], cut)
        return tool_result(payload)

    description = (
        f"Answer a question with the configured LLM ({cfg.model} at {where}): retrieves the best "
        "passages, sends them to that endpoint (they leave this machine unless it is local), and "
        "returns the answer with [n] citations mapped to chunk_id and path:lines (path#page=N for "
        "paged files), plus the passages used, most relevant first. If you can read and reason "
        "yourself, search + read_passage gives you the sources directly."
    )
    from docshelf.server.icons import tool_icons

    server.add_tool(
        ask_question, title="Ask a question (LLM)", description=description, annotations=ASK,
        icons=tool_icons("ask_question"),
    )  # fmt: skip
