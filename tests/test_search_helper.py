"""The CLI's search helper: the first search starts it, later ones are answered by it with the same
output the command prints itself, it never answers other settings or other users, and it exits
when idle. A keyword search loads neither the model nor onnxruntime, in either process."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from docshelf.cli import quick

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "corpus"
HEAVY = ("typer", "rich", "pydantic", "numpy", "tantivy", "onnxruntime", "docshelf.embed.e5")


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An indexed copy of the sample corpus and the environment of a user with helpers on."""
    runtime = Path(tempfile.mkdtemp(prefix="dsrun"))  # short: a socket's path has at most 107 bytes
    (tmp_path / "xdg").mkdir()  # also where the searches run (their working directory)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    env.update(
        XDG_RUNTIME_DIR=str(runtime), XDG_DATA_HOME=str(tmp_path / "xdg"), DOCSHELF_EMBED__MODEL="hash",
        DOCSHELF_STORE__DATA_DIR=str(tmp_path / "data"), DOCSHELF_SEARCH__HELPER="on",
        DOCSHELF_SEARCH__HELPER_IDLE_S="60", COLUMNS="72",
    )  # fmt: skip
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLES, corpus)
    subprocess.run([sys.executable, "-m", "docshelf", "index", str(corpus)], env=env, check=True,
                   capture_output=True, cwd=tmp_path)  # fmt: skip
    yield env
    for sock in runtime.glob("docshelf/*.sock"):  # stop the helpers this test started
        for pid in _helper_pids(sock):
            os.kill(pid, signal.SIGTERM)
    shutil.rmtree(runtime, ignore_errors=True)


def _helper_pids(sock: Path) -> list[int]:
    key = sock.stem.removeprefix("search-")
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"helper" in cmdline and key.encode() in cmdline:
            found.append(int(proc.name))
    return found


def _search(env: dict[str, str], *args: str, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    flags = ["-X", "importtime"] if importtime else []
    cmd = [sys.executable, *flags, "-m", "docshelf", "search", *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, cwd=env["XDG_DATA_HOME"])


def _socket(env: dict[str, str]) -> Path:
    folder = Path(env["XDG_RUNTIME_DIR"]) / "docshelf"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = list(folder.glob("search-*.sock"))
        if found and _answers(found[0]):
            return found[0]
        time.sleep(0.1)
    raise AssertionError("no search helper came up")


def _answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def _imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def _same(a: str, b: str) -> bool:
    """Equal but for the time the search took."""
    import re

    return re.sub(r"\d+ ms\)", "ms)", a) == re.sub(r"\d+ ms\)", "ms)", b)


def test_the_first_search_starts_a_helper_that_answers_the_next_ones_alike(rig: dict[str, str]) -> None:
    first = _search(rig, "deploy rollback", importtime=True)
    assert first.returncode == 0 and "tantivy" in _imported(first.stderr)  # in its own process
    sock = _socket(rig)
    assert (sock.stat().st_mode & 0o777) == 0o600 and (sock.parent.stat().st_mode & 0o777) == 0o700
    again = _search(rig, "deploy rollback", importtime=True)
    assert again.returncode == 0 and _same(again.stdout, first.stdout)
    assert not _imported(again.stderr) & set(HEAVY)  # answered by the helper: none of it loaded here
    for args in (("deploy", "--json"), ("zzzxq qqqzz", "--mode", "keyword"), ("Urlaub", "-k", "2", "--ids")):
        direct = _search(rig, *args, "--no-helper")
        helped = _search(rig, *args)
        assert helped.returncode == direct.returncode, args
        assert helped.stderr == direct.stderr, args
        if "--json" in args:
            strip = ("took_ms", "index_age")
            one, two = json.loads(direct.stdout), json.loads(helped.stdout)
            assert {k: v for k, v in one.items() if k not in strip} == {
                k: v for k, v in two.items() if k not in strip
            }
        else:
            assert _same(helped.stdout, direct.stdout), args


def test_a_usage_error_is_said_by_the_command_itself_and_the_helper_stays(rig: dict[str, str]) -> None:
    _search(rig, "deploy")
    sock = _socket(rig)
    pids = _helper_pids(sock)
    bad = _search(rig, "deploy", "--mode", "bogus", importtime=True)
    direct = _search(rig, "deploy", "--mode", "bogus", "--no-helper")
    assert bad.returncode == direct.returncode == 2 and "typer" in _imported(bad.stderr)  # said in-process
    assert [line for line in bad.stderr.splitlines() if not line.startswith("import time")] == (
        direct.stderr.splitlines()
    )
    assert _helper_pids(sock) == pids and _answers(sock)  # the helper is still there, and answers
    again = _search(rig, "deploy", importtime=True)
    assert again.returncode == 0 and "tantivy" not in _imported(again.stderr)


def test_a_keyword_search_in_its_own_process_imports_no_model(rig: dict[str, str]) -> None:
    rig["DOCSHELF_EMBED__MODEL"] = "e5"  # a hybrid search would load e5 and onnxruntime
    direct = _search(rig, "deploy", "--mode", "keyword", "--no-helper", importtime=True)
    assert direct.returncode == 0 and "runbooks/deploy.md" in direct.stdout
    assert not _imported(direct.stderr) & {"onnxruntime", "docshelf.embed.e5", "docshelf.embed._e5_onnx"}


def _maps(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.slow
def test_a_helper_loads_the_model_for_the_first_hybrid_search_only(
    rig: dict[str, str], tmp_path: Path
) -> None:
    """The real model: a keyword search's helper never loads it; hybrid searches load it once."""
    rig.update(DOCSHELF_EMBED__MODEL="e5", DOCSHELF_STORE__DATA_DIR=str(tmp_path / "e5"))
    subprocess.run([sys.executable, "-m", "docshelf", "index", str(tmp_path / "corpus")], env=rig,
                   check=True, capture_output=True, cwd=tmp_path)  # fmt: skip
    assert _search(rig, "deploy", "--mode", "keyword").returncode == 0
    (pid,) = _helper_pids(_socket(rig))
    assert _search(rig, "dashboard", "--mode", "keyword").returncode == 0
    assert "onnxruntime" not in _maps(pid)
    hybrid = _search(rig, "how do I undo a release?", importtime=True)
    assert hybrid.returncode == 0 and not _imported(hybrid.stderr) & set(HEAVY)
    assert "onnxruntime" in _maps(pid) and "runbooks/deploy.md" in hybrid.stdout
    direct = _search(rig, "how do I undo a release?", "--no-helper")
    assert _same(hybrid.stdout, direct.stdout)


def test_other_settings_are_never_answered_by_this_helper(rig: dict[str, str], tmp_path: Path) -> None:
    _search(rig, "deploy")
    sock = _socket(rig)
    other = {**rig, "DOCSHELF_SEARCH__MODE": "keyword"}
    assert quick.helper_key(None, None, rig["XDG_DATA_HOME"], other) != sock.stem.removeprefix("search-")
    got = _search(other, "deploy", importtime=True)
    assert got.returncode == 0 and "tantivy" in _imported(got.stderr)  # its own process: not this helper
    assert " hits (keyword, " in got.stdout.splitlines()[0]
    config = Path(rig["XDG_DATA_HOME"]) / "docshelf.toml"
    config.write_text('[search]\nmode = "keyword"\n', "utf-8")  # a docshelf.toml where the search runs
    assert quick.helper_key(None, None, rig["XDG_DATA_HOME"], rig) != sock.stem.removeprefix("search-")


def test_a_socket_of_another_user_is_not_trusted_and_another_user_is_not_answered(
    rig: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _search(rig, "deploy")
    sock = _socket(rig)
    request = json.dumps({"v": quick.PROTOCOL, "argv": ["deploy"], "console": {}}).encode() + b"\n"
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("another user's connection needs root and setpriv")
    base = Path(rig["XDG_RUNTIME_DIR"])
    for folder in (base, sock.parent):
        folder.chmod(0o711)
    sock.chmod(0o666)  # as if its modes were wrong: the helper still checks who is asking
    probe = (  # what it gets back: nothing, whether the helper closed at once (before the request
        # was sent: a broken pipe) or unread (a reset)
        "import socket, sys\ns = socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\n"
        "try:\n    s.sendall(sys.argv[2].encode()); s.shutdown(socket.SHUT_WR); print(len(s.recv(1000)))\n"
        "except (ConnectionResetError, BrokenPipeError):\n    print(0)"
    )
    nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    out = subprocess.run([*nobody, sys.executable, "-c", probe, str(sock), request.decode()],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 0 and out.stdout.strip() == "0", out.stderr  # closed without a word
    for folder in (base, sock.parent):
        folder.chmod(0o700)
    os.chown(sock, 65534, 65534)  # a socket someone else put there: never connected to
    assert quick.forward(["deploy"], sock) is None
    os.chown(sock, 0, 0)
    assert quick.forward(["deploy"], sock) is not None
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    assert quick.runtime_dir() == sock.parent
    sock.parent.chmod(0o755)  # a folder others may enter: no helper at all
    assert quick.runtime_dir() is None and quick.socket_path("x") is None
    sock.parent.chmod(0o700)


def test_an_idle_helper_exits_and_removes_its_socket(rig: dict[str, str]) -> None:
    rig["DOCSHELF_SEARCH__HELPER_IDLE_S"] = "2"
    _search(rig, "deploy")
    sock = _socket(rig)
    deadline = time.monotonic() + 60
    while (sock.exists() or _helper_pids(sock)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not sock.exists() and not _helper_pids(sock)


def test_a_search_that_fails_starts_no_helper(rig: dict[str, str], tmp_path: Path) -> None:
    cwd = rig["XDG_DATA_HOME"]
    missing = {**rig, "DOCSHELF_STORE__DATA_DIR": str(tmp_path / "nothing-here")}
    failed = _search(missing, "deploy")
    assert failed.returncode != 0 and "error:" in failed.stderr
    # a helper exists as soon as the search that starts it has returned (its Popen did)
    assert not _helper_pids(Path(f"search-{quick.helper_key(None, None, cwd, missing)}.sock"))
    assert _search(rig, "deploy").returncode == 0  # the check can tell: one that answers starts it
    assert _helper_pids(Path(f"search-{quick.helper_key(None, None, cwd, rig)}.sock"))


def _files(under: Path) -> dict[str, tuple[int, int, int]]:
    """Inode, size and modification time of each file under ``under`` but SQLite's -shm."""
    return {
        str(f): (f.stat().st_ino, f.stat().st_size, f.stat().st_mtime_ns)
        for f in under.rglob("*") if f.is_file() and not f.name.endswith("-shm")
    }  # fmt: skip


def _write_fds(pid: int, under: Path) -> list[str]:
    """The files under ``under`` that process ``pid`` holds open for writing."""
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
            flags = int((Path(f"/proc/{pid}/fdinfo") / fd.name).read_text().split("flags:")[1].split()[0], 8)
        except (OSError, IndexError, ValueError):
            continue
        if target.startswith(str(under)) and flags & (os.O_WRONLY | os.O_RDWR):
            found.append(target)
    return found


def test_the_helper_never_writes_and_follows_what_a_writer_indexes(
    rig: dict[str, str], tmp_path: Path
) -> None:
    _search(rig, "deploy")
    (pid,) = _helper_pids(_socket(rig))
    data = Path(rig["DOCSHELF_STORE__DATA_DIR"])
    before = _files(data)
    assert "deploy" in _search(rig, "deploy").stdout  # answered by the helper, index open
    assert _files(data) == before
    # SQLite opens the WAL and its shared-memory index read-write in every connection, read-only
    # ones too (sqlite 3.40, mode=ro: a reader marks what it reads in -shm); the rest is read only
    assert [f for f in _write_fds(pid, data) if not f.endswith(("-shm", "-wal"))] == []
    (tmp_path / "corpus" / "wombat.md").write_text("# Wombat\n\nThe wombatgrove checklist.\n", "utf-8")
    writer = subprocess.run([sys.executable, "-m", "docshelf", "index", str(tmp_path / "corpus")], env=rig,
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)  # fmt: skip
    assert writer.returncode == 0 and "1 added" in writer.stderr, writer.stderr  # no lock held by the helper
    helped = _search(rig, "wombatgrove", importtime=True)
    assert not _imported(helped.stderr) & set(HEAVY) and "wombat.md" in helped.stdout
    assert _helper_pids(_socket(rig)) == [pid]


def test_a_helper_whose_index_was_replaced_leaves_the_search_to_the_command(
    rig: dict[str, str], tmp_path: Path
) -> None:
    _search(rig, "deploy")
    sock = _socket(rig)
    (old,) = _helper_pids(sock)
    assert "tantivy" not in _imported(_search(rig, "deploy", importtime=True).stderr)  # it has the index open
    data = Path(rig["DOCSHELF_STORE__DATA_DIR"])
    shutil.rmtree(data)  # deleted and indexed again: the helper's open files are the old index's
    other = tmp_path / "other"
    other.mkdir()
    (other / "numbat.md").write_text("# Numbat\n\nThe numbatcove rota.\n", "utf-8")
    subprocess.run([sys.executable, "-m", "docshelf", "index", str(other)], env=rig, check=True,
                   capture_output=True, cwd=tmp_path)  # fmt: skip
    got = _search(rig, "numbatcove", importtime=True)
    direct = _search(rig, "numbatcove", "--no-helper")
    assert got.returncode == 0 and "tantivy" in _imported(got.stderr)  # searched in its own process
    assert _same(got.stdout, direct.stdout) and "numbat.md" in got.stdout
    deadline = time.monotonic() + 60
    while old in _helper_pids(sock) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert old not in _helper_pids(sock)  # gone; the search started one on the new index
    again = _search(rig, "numbatcove", importtime=True)
    assert "tantivy" not in _imported(again.stderr) and _same(again.stdout, direct.stdout)


def test_a_reader_that_has_gone_ends_a_helped_search_as_it_ends_the_others(rig: dict[str, str]) -> None:
    """The helper's answer written into a pipe whose reader has gone (`| head -1`): exit 141 and
    not a word, as the search in its own process does (tests/test_cli_conventions.py)."""
    _search(rig, "deploy rollback")
    _socket(rig)
    for args in (["deploy rollback"], ["deploy", "--json"]):
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            done = subprocess.run([sys.executable, "-X", "importtime", "-m", "docshelf", "search", *args],
                                  env=rig, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120,
                                  cwd=rig["XDG_DATA_HOME"])  # fmt: skip
        finally:
            os.close(write_end)
        assert not _imported(done.stderr) & set(HEAVY), args  # the helper answered it
        assert done.returncode == 141, (args, done.stderr[-800:])
        said = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
        assert said == [], args


def test_a_query_from_stdin_is_the_commands_own_stdin_with_a_helper_up(rig: dict[str, str]) -> None:
    """The helper has a stdin of its own: a "-" query is read here, and searched here."""
    assert _search(rig, "deploy rollback").returncode == 0
    sock = _socket(rig)
    cmd = [sys.executable, "-m", "docshelf", "search", "-", "--mode", "keyword"]
    piped = subprocess.run(cmd, env=rig, input="Urlaubstage verfallen", capture_output=True, text=True,
                           timeout=120, cwd=rig["XDG_DATA_HOME"])  # fmt: skip
    direct = _search(rig, "Urlaubstage verfallen", "--mode", "keyword", "--no-helper")
    assert piped.returncode == 0 and _same(piped.stdout, direct.stdout), piped.stderr
    assert "urlaubsregelung.md" in piped.stdout and _answers(sock)
