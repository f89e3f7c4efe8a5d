"""`docshelf install` into a config the user wrote by hand: JSONC (comments, trailing commas) for
Cursor and Claude Desktop, and a commented TOML file for Codex, edited in place."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

import pytest

from docshelf.errors import ConfigError
from docshelf.server.install import apply_plan, plan_install, server_command

NAME = "docshelf"

CURSOR = """\
// my servers: Cursor reads this file as JSONC
{
  /* the team's server, see
     https://wiki.example/mcp */
  "mcpServers": {
    "other": {
      "command": "x", // trailing comment
      "args": ["http://a.example/*b*/", "// not a comment", "q\\"//"],
    },
  },
  "theme": "dark",
}
"""


def _jsonc(text: str) -> object:
    from docshelf.server.jsonc import loads

    return loads(text)


@pytest.mark.parametrize("client_name", ["cursor", "claude-desktop"])
def test_install_into_jsonc_keeps_comments_and_other_entries(tmp_path: Path, client_name: str) -> None:
    """A config with // or /* */ comments or a trailing comma was refused as 'not valid JSON',
    though Cursor reads such files (and users write them)."""
    cmd = server_command(Path("~/idx"), None, read_only=False)
    target = tmp_path / "mcp.json"
    target.write_text(CURSOR)
    plan = plan_install(client_name, cmd, target)
    backup = apply_plan(plan)
    assert backup is not None and backup.read_text() == CURSOR
    text = target.read_text()
    for comment in ("// my servers", "/* the team's server, see", "// trailing comment"):
        assert comment in text
    parsed = _jsonc(text)
    assert isinstance(parsed, dict) and parsed["theme"] == "dark"
    servers = parsed["mcpServers"]
    assert servers["other"]["args"] == ["http://a.example/*b*/", "// not a comment", 'q"//']
    assert servers[NAME] == {"command": cmd[0], "args": cmd[1:]}
    assert plan_install(client_name, cmd, target).text == text  # installing twice changes nothing
    other = server_command(Path("~/other"), None, read_only=True)
    replaced = plan_install(client_name, other, target).text
    assert replaced is not None and "// trailing comment" in replaced
    assert _jsonc(replaced)["mcpServers"][NAME]["args"] == other[1:]  # type: ignore[index]


@pytest.mark.parametrize(
    "original",
    [
        '{ // no servers yet\n  "theme": "dark"\n}\n',
        "{}",
        '{"mcpServers": {}, /* empty */}',
        '{"mcpServers": {"other": {"command": "x"}}}',
        '\n{\n\t"mcpServers": {\n\t\t"other": {"command": "x"}\n\t}\n}\n',
    ],
)
def test_install_adds_the_entry_to_any_jsonc_object(tmp_path: Path, original: str) -> None:
    cmd = server_command(Path("~/idx"), None, read_only=False)
    target = tmp_path / "mcp.json"
    target.write_text(original)
    text = plan_install("cursor", cmd, target).text
    assert text is not None
    parsed = _jsonc(text)
    assert isinstance(parsed, dict) and parsed["mcpServers"][NAME] == {"command": cmd[0], "args": cmd[1:]}
    before = _jsonc(original)
    assert isinstance(before, dict)
    assert {k: v for k, v in parsed.items() if k != "mcpServers"} == {
        k: v for k, v in before.items() if k != "mcpServers"
    }
    if "/*" not in original and "//" not in original:
        json.loads(text)  # a strict JSON file stays strict JSON (Claude Desktop's reader)


@pytest.mark.parametrize(
    "bad",
    ['{"mcpServers": { // open\n', '{"a": 1 /* never closed', '{"a": 1,, }', '{"a": "x" "b"}'],
)
def test_a_broken_jsonc_file_is_left_alone_with_one_line_saying_what_to_do(tmp_path: Path, bad: str) -> None:
    target = tmp_path / "mcp.json"
    target.write_text(bad)
    with pytest.raises(ConfigError, match=r"not valid JSON.*fix it or use --print") as info:
        plan_install("cursor", server_command(Path("~/idx"), None, False), target)
    assert "\n" not in str(info.value)
    assert target.read_text() == bad


TOML_WITH_DOCSHELF = """\
# top comment
model = "o3"
note = "a\u2028b"

# docshelf below, keep me
[mcp_servers.docshelf] # mine
command = "old"
args = ["a"]

# the other server, keep me too
[mcp_servers.other]
command = "x"  # inline

[mcp_servers.docshelf.env]
TOKEN = "t"
# trailing comment
"""


def test_codex_toml_keeps_the_users_comments_and_tables_byte_for_byte(tmp_path: Path) -> None:
    """A comment between the docshelf table and the next one was dropped, the table moved to the
    end of the file, and a line separator (U+2028) inside a string split the line."""
    cmd = ["/abs/python", "-m", "docshelf", "serve"]
    target = tmp_path / "config.toml"
    target.write_text(TOML_WITH_DOCSHELF, encoding="utf-8")
    text = plan_install("codex", cmd, target).text
    entry = 'command = "/abs/python"\nargs = ["-m", "docshelf", "serve"]\n'
    assert text == TOML_WITH_DOCSHELF.replace('command = "old"\nargs = ["a"]\n', entry)
    parsed = tomllib.loads(text)
    assert parsed["note"] == "a\u2028b" and parsed["mcp_servers"][NAME]["env"] == {"TOKEN": "t"}
    assert plan_install("codex", cmd, target).text == text  # installing twice changes nothing

    without = TOML_WITH_DOCSHELF.split("# docshelf below")[0] + "[x]\ny = 1 # end"
    target.write_text(without, encoding="utf-8")
    added = plan_install("codex", cmd, target).text
    assert added == without + "\n\n[mcp_servers.docshelf]\n" + entry


@pytest.mark.parametrize("commented", [False, True])
def test_reinstalling_keeps_the_users_own_keys_in_the_docshelf_entry(tmp_path: Path, commented: bool) -> None:
    """An `env` (or `disabled`, `autoApprove`) the user added to docshelf's entry was dropped when
    `install` ran again: only the command and its arguments are ours to replace."""
    cmd = ["/abs/python", "-m", "docshelf", "serve", "--read-only"]
    mine = {
        "command": "old",
        "args": ["a"],
        "env": {"DOCSHELF_STORE": "postgresql://db/x"},
        "disabled": False,
    }
    target = tmp_path / "mcp.json"
    text = json.dumps({"mcpServers": {NAME: mine}}, indent=2)
    target.write_text(("// mine\n" + text) if commented else text, encoding="utf-8")
    entry = _jsonc(plan_install("cursor", cmd, target).text)["mcpServers"][NAME]  # type: ignore[index]
    assert entry == {"command": cmd[0], "args": cmd[1:], "env": mine["env"], "disabled": False}


def test_reinstalling_keeps_the_users_own_keys_in_the_codex_table(tmp_path: Path) -> None:
    cmd = ["/abs/python", "-m", "docshelf", "serve"]
    target = tmp_path / "config.toml"
    original = (
        '[mcp_servers.docshelf]\nstartup_timeout_sec = 30 # slow disk\ncommand = "old"\n'
        'args = [\n  "a",\n  "b",\n]\nenv = { DOCSHELF_STORE = "postgresql://db/x" }\n\n[other]\nz = 1\n'
    )
    target.write_text(original, encoding="utf-8")
    text = plan_install("codex", cmd, target).text
    assert text == original.replace(
        'command = "old"\nargs = [\n  "a",\n  "b",\n]\n',
        ('command = "/abs/python"\nargs = ["-m", "docshelf", "serve"]\n'),
    )


@pytest.mark.parametrize("client_name", ["cursor", "claude-desktop", "codex"])
def test_install_merges_with_backup(tmp_path: Path, client_name: str) -> None:
    cmd = server_command(Path("~/idx"), None, read_only=True)
    assert Path(cmd[0]).is_absolute() and cmd[1:4] == ["-m", "docshelf", "serve"]
    assert Path(cmd[cmd.index("--data-dir") + 1]).is_absolute() and cmd[-1] == "--read-only"
    if client_name == "codex":
        target = tmp_path / "config.toml"
        target.write_text(
            'model = "o3"\n\n[mcp_servers.docshelf]\ncommand = "old"\n\n[mcp_servers.other]\ncommand = "x"\n'
        )
    else:
        target = tmp_path / "mcp.json"
        target.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}))
    plan = plan_install(client_name, cmd, target)
    backup = apply_plan(plan)
    assert backup is not None and backup.exists()
    text = target.read_text()
    if client_name == "codex":
        parsed = tomllib.loads(text)
        assert parsed["model"] == "o3" and parsed["mcp_servers"]["other"] == {"command": "x"}
        assert parsed["mcp_servers"]["docshelf"] == {"command": cmd[0], "args": cmd[1:]}
    else:
        parsed = json.loads(text)
        assert parsed["theme"] == "dark" and parsed["mcpServers"]["other"] == {"command": "x"}
        assert parsed["mcpServers"]["docshelf"] == {"command": cmd[0], "args": cmd[1:]}
    assert plan_install(client_name, cmd, target).text == text  # installing twice changes nothing


@pytest.mark.parametrize("client_name", ["cursor", "codex"])
def test_install_keeps_mode_links_backups_and_the_users_own_entries(tmp_path: Path, client_name: str) -> None:
    """A 0600 config came back 0644; a linked config was replaced by a file; two installs in one
    second shared a backup (the original was lost); TOML lost [mcp_servers.docshelf.env], or a
    header with a comment made a duplicate table ("a docshelf bug")."""
    cmd = server_command(Path("~/idx"), None, read_only=False)
    real = tmp_path / "dotfiles" / ("config.toml" if client_name == "codex" else "mcp.json")
    real.parent.mkdir()
    if client_name == "codex":
        original = (
            'model = "o3"\r\n\r\n[mcp_servers.docshelf] # mine\r\ncommand = "old"\r\n\r\n'
            '[mcp_servers.docshelf.env]\r\nTOKEN = "t"\r\n'
        )
    else:
        original = json.dumps({"mcpServers": {"other": {"command": "x", "env": {"KEY": "secret"}}}})
    real.write_bytes(original.encode())
    os.chmod(real, 0o600)
    link = tmp_path / real.name
    link.symlink_to(real)
    first = apply_plan(plan_install(client_name, cmd, link))
    assert apply_plan(plan_install(client_name, cmd, link)) is None  # unchanged: no backup, no write
    changed = server_command(Path("~/idx"), None, read_only=True)
    second = apply_plan(plan_install(client_name, changed, link))
    assert link.is_symlink() and stat.S_IMODE(real.stat().st_mode) == 0o600
    assert first is not None and second is not None and first != second
    assert first.read_bytes() == original.encode()
    if client_name == "codex":
        text = real.read_bytes().decode()
        parsed = tomllib.loads(text)
        assert parsed["mcp_servers"]["docshelf"]["env"] == {"TOKEN": "t"} and "\r\n" in text
        assert parsed["mcp_servers"]["docshelf"]["command"] == cmd[0]
        dotted = tmp_path / "dotted.toml"
        dotted.write_text('mcp_servers.docshelf.command = "old"\n')
        with pytest.raises(ConfigError, match="edit it by hand"):
            plan_install(client_name, cmd, dotted)
    else:
        assert json.loads(real.read_text())["mcpServers"]["other"]["env"] == {"KEY": "secret"}
        for bad in ('{"mcpServers": null}', '{"mcpServers": []}'):
            real.write_text(bad)
            with pytest.raises(ConfigError, match="mcpServers"):
                plan_install(client_name, cmd, link)
        real.write_bytes(b"\xff\xfe{}")
        with pytest.raises(ConfigError, match="not UTF-8"):
            plan_install(client_name, cmd, link)
    with pytest.raises(ConfigError, match="is a folder"):
        plan_install(client_name, cmd, tmp_path)


def test_install_claude_code_command() -> None:
    plan = plan_install("claude-code", ["/abs/python", "-m", "docshelf", "serve"])
    assert plan.commands[0] == ["claude", "mcp", "remove", "--scope", "user", "docshelf"]
    assert plan.commands[1] == [
        "claude",
        "mcp",
        "add",
        "--scope",
        "user",
        "docshelf",
        "--",
        "/abs/python",
        "-m",
        "docshelf",
        "serve",
    ]
