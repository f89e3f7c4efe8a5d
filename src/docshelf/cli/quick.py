"""`docshelf search` answered by the search helper, if one runs: the standard library only.

A search from the command line used to pay for the interpreter's imports (typer, rich, pydantic,
numpy, tantivy), opening the index and, in hybrid mode, loading the model: ~0.5 s and ~1 s a call.
The first search starts a per-user helper process (cli/helper.py) that keeps all of that loaded
and answers later searches over a Unix socket; this module is what a search costs then: it sends
the arguments and prints what the helper rendered, exactly what the command would have printed.

The socket lives in a folder only this user can enter (``$XDG_RUNTIME_DIR/docshelf``, else
``/tmp/docshelf-UID``, checked: a folder of this user's, mode 0700, no link); the helper also
checks the peer's user id. One helper serves one set of settings: its name is a hash of what
they come from (the config file and its bytes, --data-dir, the DOCSHELF_* and XDG variables, the
docshelf version and interpreter), so a search is never answered with other settings.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import struct
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "ENV_KEYS",
    "PROTOCOL",
    "answered",
    "client_console",
    "forward",
    "helper_key",
    "peer_uid",
    "runtime_dir",
    "socket_path",
    "split_command",
    "start",
]

PROTOCOL = 1
# the environment a command's settings and output depend on besides DOCSHELF_* variables
ENV_KEYS = ("HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")
# what rich reads from the environment to decide on colour, terminal and width
CONSOLE_ENV = ("TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS", "LINES")
_CONNECT_S = 1.0
_ANSWER_S = 600.0  # a first hybrid search may wait for the helper to load the model
_MAX_ANSWER = 64 * 1024 * 1024


def _option(argv: Sequence[str], name: str) -> str | None:
    """The value of ``--name VALUE`` or ``--name=VALUE`` (the last one given), as click reads it."""
    value = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == name and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith(name + "="):
            value = arg[len(name) + 1 :]
    return value


def helper_key(
    config: str | None, data_dir: str | None, cwd: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    """The name of the helper for these settings' sources (see the module's docstring)."""
    env = os.environ if env is None else env
    cwd = cwd or os.getcwd()
    if config:
        found: str | None = os.path.abspath(os.path.join(cwd, os.path.expanduser(config)))
    else:
        candidate = os.path.join(cwd, "docshelf.toml")  # as config.find_config looks for it
        found = candidate if os.path.isfile(candidate) else None
    try:
        content = Path(found).read_bytes() if found else b""
    except OSError:
        content = b"unreadable"
    from docshelf import __version__

    parts = [
        str(PROTOCOL), __version__, sys.executable, found or "", hashlib.sha256(content).hexdigest(),
        os.path.abspath(os.path.join(cwd, os.path.expanduser(data_dir))) if data_dir else "",
        *sorted(f"{k}={v}" for k, v in env.items() if k.startswith("DOCSHELF_") or k in ENV_KEYS),
    ]  # fmt: skip
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:24]


def _private(folder: Path) -> bool:
    """A real folder (no link) of this user's that nobody else may enter."""
    try:
        info = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def runtime_dir(create: bool = False) -> Path | None:
    """The folder for this user's helper sockets, None where no private one can be had."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    own = Path(base) / "docshelf" if base and _private(Path(base)) else None
    folder = own or Path(f"/tmp/docshelf-{os.getuid()}")
    if create and not folder.exists():
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
    return folder if _private(folder) else None


_SUN_PATH = 107  # bytes a Unix socket's path may have (Linux: 108 with the final NUL)


def socket_path(key: str, create: bool = False) -> Path | None:
    folder = runtime_dir(create)
    path = None if folder is None else folder / f"search-{key}.sock"
    return path if path is not None and len(os.fsencode(path)) <= _SUN_PATH else None


def _terminal_width() -> int | None:
    """The terminal size rich would find (the first of stdin, stdout, stderr that has one)."""
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns
        except (OSError, ValueError):
            continue
    return None


def client_console() -> dict[str, Any]:
    """What the helper needs to render as this process's consoles would."""
    return {
        "stdout_tty": _isatty(sys.stdout),
        "stderr_tty": _isatty(sys.stderr),
        "width": _terminal_width(),
        "env": {k: os.environ[k] for k in CONSOLE_ENV if k in os.environ},
    }


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end of a Unix socket (Linux's SO_PEERCRED)."""
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    return int(struct.unpack("3i", raw)[1])


def forward(argv: Sequence[str], path: Path) -> dict[str, Any] | None:
    """The helper's answer to `docshelf search ARGV`, or None (no helper, or it cannot answer)."""
    try:
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        return None
    request = {"v": PROTOCOL, "argv": list(argv), "console": client_console()}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(_CONNECT_S)
            sock.connect(str(path))
            if peer_uid(sock) != os.getuid():  # the folder is private; this holds if it was not
                return None
            sock.settimeout(_ANSWER_S)
            sock.sendall(json.dumps(request).encode() + b"\n")
            sock.shutdown(socket.SHUT_WR)
            chunks, size = [], 0
            while chunk := sock.recv(1 << 16):
                chunks.append(chunk)
                size += len(chunk)
                if size > _MAX_ANSWER:
                    return None
        answer = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None
    if not isinstance(answer, dict) or answer.get("v") != PROTOCOL or answer.get("fallback"):
        return None
    return answer


_BEFORE = ("--config", "--data-dir")  # the options before a command that a helper's settings follow


def split_command(
    argv: Sequence[str], flags: Sequence[str] = ()
) -> tuple[dict[str, str], str, list[str]] | None:
    """The options given before the command (``--config``, ``--data-dir``, and those of ``flags``
    given, with the value ""), the command's name and its own arguments; None where no command
    follows them (`--help`, `--version`, another option: the command line's own process handles
    those)."""
    before: dict[str, str] = {}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] in flags:
            before[argv[i]] = ""
            i += 1
            continue
        name, eq, value = argv[i].partition("=")
        if name not in _BEFORE:
            return None
        if not eq:
            if i + 1 >= len(argv):
                return None
            i, value = i + 1, argv[i + 1]
        before[name] = value
        i += 1
    if i >= len(argv):
        return None
    return before, argv[i], list(argv[i + 1 :])


def answered(argv: Sequence[str]) -> int | None:
    """The exit code of `docshelf ARGV` if a search helper answered it, else None (the command
    runs in this process, as it would without a helper)."""
    found = split_command(argv)  # -v asks for this process's own logs: no helper then
    if found is None or found[1] != "search":
        return None
    before, _, args = found
    if any(a in ("--help", "--no-helper", "-") for a in args):
        return None  # "-": the query is this command's stdin, which the helper cannot read
    config = _option(args, "--config") or before.get("--config")  # a command's own option wins
    data_dir = _option(args, "--data-dir") or before.get("--data-dir")
    path = socket_path(helper_key(config, data_dir))
    answer = None if path is None else forward(args, path)
    if answer is None:
        return None
    out, err = answer.get("stdout", ""), answer.get("stderr", "")
    if not isinstance(out, str) or not isinstance(err, str):
        return None
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.stderr.write(err)
    sys.stderr.flush()
    code = answer.get("code", 1)
    return code if isinstance(code, int) else 1


def start(config: Path | None, data_dir: Path | None, warm: bool, idle_s: float) -> None:
    """Start the helper for these settings in the background (nothing waits for it)."""
    import subprocess  # only here: a search that starts no helper need not import it

    key = helper_key(str(config) if config else None, str(data_dir) if data_dir else None)
    if socket_path(key, create=True) is None:
        return
    cmd = [sys.executable, "-m", "docshelf", "helper", "--key", key, "--idle", str(idle_s)]
    cmd += ["--config", str(config)] if config else []
    cmd += ["--data-dir", str(data_dir)] if data_dir else []
    cmd += ["--warm"] if warm else []
    with contextlib.suppress(OSError):  # no helper: every search runs in its own process, as before
        subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
