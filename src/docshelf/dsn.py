"""URLs in messages and status (PostgreSQL DSNs, LLM endpoints): never with their passwords."""

from __future__ import annotations

__all__ = ["dsn_secrets", "hide_secrets", "redact_dsn", "same_database"]

_SECRET_PARAMS = frozenset({"password", "sslpassword"})


def dsn_secrets(url: str) -> list[str]:
    """The password values in a DSN, raw and decoded (longest first)."""
    from urllib.parse import unquote

    rest = url.split("://", 1)[-1].partition("#")[0]
    rest, _, query = rest.partition("?")
    found = []
    if "@" in rest and ":" in (creds := rest.rsplit("@", 1)[0]):
        found.append(creds.split(":", 1)[1])
    found += [v for n, _, v in (p.partition("=") for p in query.split("&")) if n.lower() in _SECRET_PARAMS]
    return sorted({x for v in found if v for x in (v, unquote(v))}, key=len, reverse=True)


def hide_secrets(text: str, url: str) -> str:
    """``text`` (a driver's error, which may quote parts of the DSN) with the DSN's passwords masked."""
    for secret in dsn_secrets(url):
        text = text.replace(secret, "***")
    return text


def redact_dsn(url: str) -> str:
    """A DSN without its passwords (``user:pass@`` and ``?password=``), for messages and status."""
    if "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    rest, _, fragment = rest.partition("#")
    rest, sep, query = rest.partition("?")
    if "@" in rest:
        creds, host = rest.rsplit("@", 1)
        rest = f"{creds.split(':', 1)[0]}@{host}"
    params = [
        f"{name}=***" if name.lower() in _SECRET_PARAMS else (name + eq + value)
        for name, eq, value in (p.partition("=") for p in query.split("&") if p)
    ]
    return f"{scheme}://{rest}{sep}{'&'.join(params)}" + (f"#{fragment}" if fragment else "")


def same_database(a: str, b: str) -> bool:
    """Whether two postgresql:// DSNs name one database (host, port, database; not the user)."""
    from urllib.parse import urlsplit

    def where(url: str) -> tuple[str, int, str]:
        parts = urlsplit(url.replace("postgres://", "postgresql://", 1))
        return (parts.hostname or "localhost", parts.port or 5432, parts.path.lstrip("/"))

    try:
        return where(a) == where(b)
    except ValueError:  # a port that is not a number: compare as written
        return a == b
