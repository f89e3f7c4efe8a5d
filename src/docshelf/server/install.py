"""`docshelf install CLIENT`: the MCP client's config entry, with absolute paths, merged with a backup."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docshelf.errors import ConfigError
from docshelf.server import jsonc

__all__ = ["CLIENTS", "InstallPlan", "apply_plan", "plan_install", "server_command"]

CLIENTS = ("claude-code", "claude-desktop", "cursor", "codex")
NAME = "docshelf"


def server_command(
    data_dir: Path, config: Path | None, read_only: bool, allow_ingest: Sequence[Path] = ()
) -> list[str]:
    """Absolute command line of the stdio server: MCP clients start it without our PATH or cwd."""
    # this very interpreter has docshelf installed; a `docshelf` on PATH may belong to another env
    cmd = [
        str(Path(sys.executable).absolute()),
        "-m",
        "docshelf",
        "serve",
        "--data-dir",
        str(data_dir.expanduser().absolute()),
    ]
    if config is not None:
        cmd += ["--config", str(config.expanduser().absolute())]
    if read_only:
        cmd.append("--read-only")
    for folder in allow_ingest:
        cmd += ["--allow-ingest", str(folder.expanduser().absolute())]
    return cmd


@dataclass
class InstallPlan:
    """What install would do: run ``commands`` in order, or write ``text`` to ``path``."""

    client: str
    commands: list[list[str]] = field(default_factory=list)
    path: Path | None = None
    text: str | None = None
    note: str | None = None  # one line for stderr: what the merge could not keep

    @property
    def unchanged(self) -> bool:
        """The file holds ``text`` already: installing again writes nothing, backs up nothing."""
        if self.path is None or self.text is None:
            return False
        try:
            with self.path.open(encoding="utf-8", newline="") as fh:
                return fh.read() == self.text
        except (OSError, UnicodeDecodeError):
            return False


def _config_path(client: str) -> Path:
    home = Path.home()
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client == "codex":
        return Path(os.environ.get("CODEX_HOME", home / ".codex")) / "config.toml"
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", home)) / "Claude" / "claude_desktop_config.json"
    return Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "Claude" / "claude_desktop_config.json"


def _read(path: Path) -> str:
    """The config's text ("" when there is none yet); a BOM is dropped, other trouble is one line."""
    if path.is_dir():
        raise ConfigError(f"{path} is a folder, not a config file; pass the file with --file")
    if not path.exists():
        return ""
    try:
        return path.read_bytes().decode("utf-8-sig")  # bytes: CRLF line ends are kept
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text ({exc.reason}); fix it or use --print") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path} ({exc.strerror}); fix it or use --print") from None


def _merge_json(path: Path, cmd: list[str]) -> tuple[str, str | None]:
    """The config with our entry set, and a note when the user's comments could not be kept.

    Cursor (and VS Code) read JSONC: comments and trailing commas are accepted, and a file with
    comments is edited in place so they survive; a plain JSON file is rewritten as before.
    """
    data: dict[str, Any] = {}
    old = _read(path)
    if old.strip():
        try:
            data = jsonc.loads(old)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{path} is not valid JSON, even allowing comments and trailing commas ({exc}); "
                "fix it or use --print"
            ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it or use --print")
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f'"mcpServers" in {path} is not an object; fix it or use --print')
    previous = servers.get(NAME)
    # the user's own keys stay (env, disabled, autoApprove, ...); those of another transport go
    kept = {k: v for k, v in previous.items() if k not in _OURS} if isinstance(previous, dict) else {}
    entry = {"command": cmd[0], "args": cmd[1:], **kept}
    servers[NAME] = entry
    plain = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if not old.strip() or not jsonc.has_comments(old):
        return plain, None
    text = jsonc.set_member(old, "mcpServers", NAME, entry)
    try:
        if jsonc.loads(text) == data:
            return text, None
    except json.JSONDecodeError:
        pass
    # an edit this module got wrong must not reach the file: plain JSON, and the backup says the rest
    return plain, f"the comments in {path} could not be kept; the original is in the backup"


# the keys of docshelf's entry that install writes, and those of an HTTP entry it replaces
_OURS = frozenset({"command", "args", "url", "type", "headers"})
_KEY = re.compile(rf"^\s*({'|'.join(sorted(_OURS))})\s*=")
_STRINGS = re.compile(r"\"(?:\\.|[^\"\\])*\"|'[^']*'")


def _depth(line: str) -> int:
    """How many more brackets ``line`` opens than it closes, outside strings and comments."""
    code = _STRINGS.sub("", line).split("#", 1)[0]
    return code.count("[") + code.count("{") - code.count("]") - code.count("}")


def _set_keys(body: list[str], keys: list[str]) -> list[str]:
    """``body`` (a table's key lines) with our keys (a value may span lines) in place of the old
    ones, where the first of them was; the user's other keys and comments stay as written."""
    out: list[str] = []
    placed, i = False, 0
    while i < len(body):
        if not _KEY.match(body[i]):
            out.append(body[i])
            i += 1
            continue
        depth, i = _depth(body[i].split("=", 1)[1]), i + 1
        while depth > 0 and i < len(body):
            depth, i = depth + _depth(body[i]), i + 1
        if not placed:
            out.extend(keys)
            placed = True
    return out if placed else keys + out


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


_TABLE = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*(\"docshelf\"|'docshelf'|docshelf)\s*\]\s*(#.*)?$")
_ANY_TABLE = re.compile(r"^\s*\[")


def _body_end(lines: list[str], start: int) -> int:
    """Where the keys of the table whose header is ``lines[start]`` end: at the next header, less
    the comments and blank lines before it (they introduce what follows, so they stay)."""
    end = start + 1
    while end < len(lines) and not _ANY_TABLE.match(lines[end]):
        end += 1
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def _without_docshelf(parsed: dict[str, Any]) -> dict[str, Any]:
    servers = dict(parsed.get("mcp_servers", {}))
    servers.pop(NAME, None)
    return {**parsed, "mcp_servers": servers}


def _merge_toml(path: Path, cmd: list[str]) -> str:
    """Replace the keys of the [mcp_servers.docshelf] table in place (or append the table); every
    other line (comments, its own sub-tables such as [mcp_servers.docshelf.env]) is kept byte for
    byte, line ends included."""
    old = _read(path)
    try:
        before = tomllib.loads(old)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it or use --print") from exc
    newline = "\r\n" if "\r\n" in old else "\n"
    # split at line feeds only: str.splitlines() also splits at U+2028 and the like inside strings
    lines = [line for line in re.split(r"(?<=\n)", old) if line]
    args = ", ".join(_toml_str(a) for a in cmd[1:])
    keys = [f"command = {_toml_str(cmd[0])}{newline}", f"args = [{args}]{newline}"]
    header = next((i for i, line in enumerate(lines) if _TABLE.match(line.rstrip("\r\n"))), None)
    if header is not None:
        if not lines[header].endswith("\n"):
            lines[header] += newline
        end = _body_end(lines, header)
        lines[header + 1 : end] = _set_keys(lines[header + 1 : end], keys)
        text = "".join(lines)
    else:
        text = old + (newline if old and not old.endswith("\n") else "")
        text += (newline if text.strip() else "") + f"[mcp_servers.{NAME}]{newline}" + "".join(keys)
    try:
        after = tomllib.loads(text)  # never write a file the client cannot read
    except tomllib.TOMLDecodeError:
        after = None
    entry = (after or {}).get("mcp_servers", {}).get(NAME, {})
    mine = {k: v for k, v in before.get("mcp_servers", {}).get(NAME, {}).items() if k not in _OURS}
    if (
        after is None
        or _without_docshelf(after) != _without_docshelf(before)
        or entry != {**mine, "command": cmd[0], "args": cmd[1:]}
    ):
        raise ConfigError(
            f"{path} defines docshelf's server in a form this merge does not rewrite (dotted keys or "
            "an inline table); remove that entry, or edit it by hand (--print shows the entry)"
        )
    return text


def plan_install(client: str, cmd: list[str], path: Path | None = None) -> InstallPlan:
    """The command to run (claude-code) or the merged config text for ``client``."""
    if client not in CLIENTS:
        raise ConfigError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")
    if client == "claude-code":
        # `claude mcp add` refuses a name that exists: our own older entry is removed first, so
        # installing twice replaces it (as the JSON and TOML merges do)
        remove = ["claude", "mcp", "remove", "--scope", "user", NAME]
        add = ["claude", "mcp", "add", "--scope", "user", NAME, "--", *cmd]
        return InstallPlan(client, commands=[remove, add])
    target = path or _config_path(client)
    if client == "codex":
        return InstallPlan(client, path=target, text=_merge_toml(target, cmd))
    text, note = _merge_json(target, cmd)
    return InstallPlan(client, path=target, text=text, note=note)


def apply_plan(plan: InstallPlan) -> Path | None:
    """Write the config (backing up the old file first); returns the backup's path, if any.

    A config that is a link (a dotfile manager's) is written where it points; the new file keeps
    the old one's permissions (a 0600 file holding other servers' tokens stays 0600). A file that
    holds the entry already is left alone: each re-run made one more identical backup.
    """
    assert plan.path is not None and plan.text is not None
    if plan.unchanged:
        return None
    target = plan.path.resolve() if plan.path.is_symlink() else plan.path
    target.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    mode = None
    if target.exists():
        mode = stat.S_IMODE(target.stat().st_mode)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = target.with_name(f"{target.name}.{stamp}.bak")
        n = 1
        while backup.exists():  # two installs in one second: the first backup is the original
            backup, n = target.with_name(f"{target.name}.{stamp}-{n}.bak"), n + 1
        shutil.copy2(target, backup)
    tmp = target.with_name(target.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if mode is None else mode)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(plan.text)
    if mode is not None:
        os.chmod(tmp, mode)  # the umask may have taken bits away: the old file's mode, exactly
    else:
        os.chmod(tmp, 0o666 & ~_umask())
    tmp.replace(target)  # atomic: a crash never leaves a half-written config
    return backup


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
