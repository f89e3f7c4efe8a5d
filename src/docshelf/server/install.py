"""`docshelf install CLIENT`: the MCP client's config entry, with absolute paths, merged with a backup."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docshelf.errors import ConfigError

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


def _merge_json(path: Path, cmd: list[str]) -> str:
    data: dict[str, Any] = {}
    if path.is_file() and path.read_text("utf-8").strip():
        try:
            data = json.loads(path.read_text("utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path} is not valid JSON ({exc}); fix it or use --print") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it or use --print")
    servers = data.setdefault("mcpServers", {})
    servers[NAME] = {"command": cmd[0], "args": cmd[1:]}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _merge_toml(path: Path, cmd: list[str]) -> str:
    """Replace (or append) the [mcp_servers.docshelf] table; the rest of the file is kept as written."""
    old = path.read_text("utf-8") if path.is_file() else ""
    try:
        tomllib.loads(old)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it or use --print") from exc
    header = f"[mcp_servers.{NAME}]"
    kept: list[str] = []
    skipping = False
    for line in old.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            skipping = stripped == header or stripped.startswith(f"[mcp_servers.{NAME}.")
        if not skipping:
            kept.append(line)
    args = ", ".join(_toml_str(a) for a in cmd[1:])
    table = f"{header}\ncommand = {_toml_str(cmd[0])}\nargs = [{args}]\n"
    body = "\n".join(kept).rstrip()
    text = (body + "\n\n" if body else "") + table
    tomllib.loads(text)  # never write a file the client cannot read
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
    text = _merge_toml(target, cmd) if client == "codex" else _merge_json(target, cmd)
    return InstallPlan(client, path=target, text=text)


def apply_plan(plan: InstallPlan) -> Path | None:
    """Write the config (backing up the old file first); returns the backup's path, if any."""
    assert plan.path is not None and plan.text is not None
    plan.path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if plan.path.exists():
        backup = plan.path.with_name(f"{plan.path.name}.{time.strftime('%Y%m%d-%H%M%S')}.bak")
        shutil.copy2(plan.path, backup)
    tmp = plan.path.with_name(plan.path.name + ".tmp")
    tmp.write_text(plan.text, "utf-8")
    tmp.replace(plan.path)  # atomic: a crash never leaves a half-written config
    return backup
