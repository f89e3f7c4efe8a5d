"""Print the terminal session that docs/cli.md shows, from real runs: each command in an 80-column
pseudo-terminal (stdout and stderr on it, as a person sees them), with a fresh data dir and cache,
the sample corpus plus a scratch folder (four Markdown files whose frontmatter is broken, one binary
file, one good note), and the hash embedder, so that tests/test_cli_session.py can run it again
and compare. Paths under the scratch folder print as /tmp/session.

    python bench/cli_session.py > /tmp/session.txt    # then paste it into docs/cli.md
"""

from __future__ import annotations

import errno
import fcntl
import os
import pty
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHOWN_ROOT = "/tmp/session"
WIDTH = 80

# what the session runs, in order; SCRATCH stands for the scratch folder
SESSION = [
    ["index", "samples/corpus"],
    ["index", "SCRATCH", "-c", "scratch"],
    ["search", "how do we page someone for a sev-1", "-k", "3"],
    ["read", "runbooks/incident-response.md:18-22", "-C", "1"],
    ["ls", "-c", "samples"],
    ["status"],
    ["status", "--skipped"],
]

_BROKEN = "---\ntitle: {name}\ntags: [minutes, {name}\n---\n\n# {name}\n\nNotes of the {name} meeting.\n"
_GOOD = (
    "# Ops sync, 12 May\n\nPaging: a SEV-1 pages the on-call engineer through the pager, never by phone.\n"
    "Action: write the postmortem within three working days.\n"
)
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


def make_scratch(folder: Path) -> None:
    minutes = folder / "minutes"
    minutes.mkdir(parents=True)
    for name in ("budget", "hiring", "roadmap", "travel"):
        (minutes / f"{name}.md").write_text(_BROKEN.format(name=name), encoding="utf-8")
    (minutes / "export.md").write_bytes(b"\x00\x01PK\x03\x04" + bytes(range(256)) * 8)
    (minutes / "ops-sync.md").write_text(_GOOD, encoding="utf-8")


def in_terminal(args: list[str], env: dict[str, str]) -> str:
    """What `docshelf ARGS` shows in an 80-column terminal (no colours: TERM=dumb)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, WIDTH, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "docshelf", *args], cwd=ROOT, env=env,
        stdin=subprocess.DEVNULL, stdout=child, stderr=child, close_fds=True,
    )  # fmt: skip
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError as exc:  # EIO: the child closed the terminal
            if exc.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    proc.wait(timeout=300)
    text = _ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r\n", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n")


def session() -> str:
    with tempfile.TemporaryDirectory(prefix="docshelf-session-") as tmp:
        top = Path(tmp)
        scratch = top / "scratch"
        make_scratch(scratch)
        env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
        env.update(
            DOCSHELF_EMBED__MODEL="hash", XDG_DATA_HOME=str(top), XDG_CACHE_HOME=str(top / "cache"),
            COLUMNS=str(WIDTH), LINES="50", TERM="dumb", NO_COLOR="1", PYTHONIOENCODING="utf-8",
        )  # fmt: skip
        env.pop("FORCE_COLOR", None)
        shown = []
        for spec in SESSION:
            args = [str(scratch) if a == "SCRATCH" else a for a in spec]
            shown.append("$ docshelf " + shlex.join(args))
            shown.append(in_terminal(args, env))
        return "\n".join(shown).replace(tmp, SHOWN_ROOT)


if __name__ == "__main__":
    print(session())
