"""Server-side answers: retrieve passages, ask an LLM, return the answer with mapped citations.

Optional and off until ``answer.model`` is set: the passages are sent to that LLM's endpoint.
"""

from __future__ import annotations

from docshelf.answer.ask import Answer, Retrieved, SourcePassage, compose, retrieve
from docshelf.answer.llm import ChatClient, LLMError, create_client, llm_configured

__all__ = [
    "Answer",
    "ChatClient",
    "LLMError",
    "Retrieved",
    "SourcePassage",
    "compose",
    "create_client",
    "llm_configured",
    "retrieve",
]
