"""Chat clients for `docshelf ask`: any OpenAI-compatible /chat/completions endpoint, or Anthropic.

Both speak plain HTTP through httpx2 (installed with the MCP SDK), so no vendor SDK is needed. A
client is only built when an answer is asked for; a missing key or model is a ConfigError that
names the setting, an unreachable or failing endpoint an LLMError that says what happened.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from docshelf.config_services import ANTHROPIC_URL, OPENAI_URL, AnswerSettings
from docshelf.dsn import dsn_secrets, redact_dsn
from docshelf.errors import ConfigError, DocshelfError

__all__ = [
    "ANTHROPIC_URL",
    "OPENAI_URL",
    "AnthropicChat",
    "ChatClient",
    "LLMError",
    "OpenAIChat",
    "create_client",
    "llm_configured",
]

ANTHROPIC_VERSION = "2023-06-01"
_KEY_HEADERS = frozenset({"authorization", "x-api-key"})


class LLMError(DocshelfError):
    """The LLM endpoint could not be reached or answered with an error."""

    exit_code = 10


class ChatClient(Protocol):
    """One system + user turn in, the model's text out."""

    @property
    def name(self) -> str: ...

    endpoint: str

    def complete(self, system: str, user: str) -> str: ...


def llm_configured(settings: AnswerSettings) -> bool:
    """True when an answer model is set (the only condition for offering `ask_question`)."""
    return bool(settings.model and settings.model.strip())


def api_url(endpoint: str, path: str) -> str:
    """``endpoint`` + ``path``, a query string kept at the end (Azure's ``?api-version=...``)."""
    parts = urlsplit(endpoint)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path))


def _masked(text: str, secrets: list[str]) -> str:
    for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _post(url: str, body: dict[str, Any], headers: dict[str, str], timeout: float, what: str) -> Any:
    """POST ``body``; the whole exchange (not each read) within ``timeout`` seconds. No message
    holds the API key or a password of the URL, even where the endpoint echoes them back."""
    import httpx2

    secrets = [v.removeprefix("Bearer ") for k, v in headers.items() if k.lower() in _KEY_HEADERS]
    secrets += dsn_secrets(url)
    shown = redact_dsn(url)
    deadline = time.monotonic() + timeout
    late = LLMError(f"the LLM at {shown} did not answer within {timeout:g} s; raise answer.timeout_s")
    try:
        with httpx2.stream("POST", url, json=body, headers=headers, timeout=timeout) as resp:
            chunks: list[bytes] = []
            for chunk in resp.iter_bytes():  # a server trickling bytes is cut at the deadline
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise late
            raw = b"".join(chunks)
    except httpx2.TimeoutException as exc:
        raise late from exc
    except httpx2.HTTPError as exc:
        reason = _masked(str(exc), secrets)
        raise LLMError(
            f"cannot reach the LLM at {shown} ({reason}); start it or fix answer.endpoint"
        ) from exc
    if resp.status_code in (401, 403):
        raise LLMError(f"the LLM at {shown} refused the API key (HTTP {resp.status_code}); {what}")
    text = raw.decode("utf-8", "replace")
    if resp.status_code >= 400:
        detail = _masked(" ".join(text.split()), secrets)[:200]
        raise LLMError(f"the LLM at {shown} answered HTTP {resp.status_code}: {detail}")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise LLMError(
            f"the LLM at {shown} did not answer JSON; is answer.endpoint an API base URL?"
        ) from exc


def _error_of(data: Any) -> str:
    """The endpoint's own message in an answer without the expected parts ("model not found")."""
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return f": {' '.join(str(message).split())[:200]}" if message else ""


def _text_of(content: Any) -> str:
    """A message's content: a string, or a list of parts (``{"type": "text", "text": ...}``)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


@dataclass
class OpenAIChat:
    """``POST {endpoint}/chat/completions`` (OpenAI, Ollama, LM Studio, llama.cpp server, vLLM)."""

    model: str
    endpoint: str
    api_key: str | None
    max_tokens: int
    temperature: float
    timeout: float

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def complete(self, system: str, user: str) -> str:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        url = api_url(self.endpoint, "/chat/completions")
        data = _post(url, body, headers, self.timeout, "set DOCSHELF_ANSWER__API_KEY or OPENAI_API_KEY")
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMError(
                f"the LLM at {redact_dsn(url)} answered without choices[0].message.content{_error_of(data)}"
            ) from exc
        return _text_of(content).strip()


@dataclass
class AnthropicChat:
    """``POST {endpoint}/v1/messages`` (the Anthropic Messages API)."""

    model: str
    endpoint: str
    api_key: str
    max_tokens: int
    temperature: float
    timeout: float

    @property
    def name(self) -> str:
        return f"anthropic:{self.model}"

    def complete(self, system: str, user: str) -> str:
        headers = {"x-api-key": self.api_key, "anthropic-version": ANTHROPIC_VERSION}
        body = {
            "model": self.model,
            "system": system,
            "messages": [{"role": "user", "content": user}],
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        url = api_url(self.endpoint, "/v1/messages")
        data = _post(url, body, headers, self.timeout, "set DOCSHELF_ANSWER__API_KEY or ANTHROPIC_API_KEY")
        blocks = data.get("content") if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            raise LLMError(f"the LLM at {redact_dsn(url)} answered without a content list{_error_of(data)}")
        return "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict)).strip()


def create_client(settings: AnswerSettings) -> ChatClient:
    """The configured chat client; ConfigError says which setting is missing."""
    if not llm_configured(settings):
        raise ConfigError(
            "no LLM configured: set answer.model (DOCSHELF_ANSWER__MODEL) and, for a local server, "
            "answer.endpoint (e.g. http://127.0.0.1:11434/v1 for Ollama)"
        )
    model = str(settings.model).strip()
    limits = (settings.max_tokens, settings.temperature, settings.timeout_s)
    if settings.provider == "anthropic":
        key = settings.api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ConfigError(
                "answer.provider anthropic needs a key: set DOCSHELF_ANSWER__API_KEY or ANTHROPIC_API_KEY"
            )
        endpoint = settings.endpoint or ANTHROPIC_URL
        return AnthropicChat(model, endpoint, key, *limits)
    key = settings.api_key or os.environ.get("OPENAI_API_KEY")
    if not settings.endpoint and not key:
        raise ConfigError(
            "answer.model without answer.endpoint means the OpenAI API, which needs a key: set "
            "DOCSHELF_ANSWER__API_KEY or OPENAI_API_KEY, or answer.endpoint for a local server"
        )
    endpoint = settings.endpoint or OPENAI_URL
    return OpenAIChat(model, endpoint, key, *limits)
