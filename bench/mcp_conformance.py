"""The MCP conformance suite's server scenarios against the real `docshelf serve --http`.

    python bench/mcp_conformance.py --conformance /tmp/conf/node_modules/.bin/conformance \
        [--node /tmp/node22/node_modules/.bin/node] [--scenario NAME ...] [--out DIR]

Install the suite (it needs Node >= 22; npm can fetch that too):

    npm install --prefix /tmp/node22 node@22
    npm install --prefix /tmp/conf @modelcontextprotocol/conformance

The sample corpus is indexed with the hash embedder into a scratch folder, `docshelf serve --http`
is started on it, and the suite talks to it through a loopback pass-through that adds the bearer
token (the suite has no option for request headers; everything else, Host and Origin included,
goes through as sent). Many scenarios call tools of the suite's reference server
(`test_simple_text`, `test_prompt_with_image`, ...) that docshelf does not have: those are listed
as "n/a (reference tool)" and are not docshelf failures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# the scenarios whose checks exercise only what any MCP server has (no reference-server tools)
GENERIC = {
    "server-initialize", "logging-set-level", "ping", "completion-complete", "tools-list",
    "resources-list", "prompts-list", "dns-rebinding-protection", "server-sse-multiple-streams",
}  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"docshelf serve exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"nothing listens on port {port} after {timeout:.0f} s")


def _proxy(target: str, token: str, port: int) -> None:
    """Serve a pass-through on ``port`` that adds ``Authorization: Bearer token`` (a thread)."""
    import httpx2
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.types import Receive, Scope, Send

    client = httpx2.AsyncClient(timeout=None)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        headers = [(k, v) for k, v in request.headers.items() if k not in ("content-length", "authorization")]
        headers.append(("authorization", f"Bearer {token}"))
        sent = client.build_request(
            request.method, target + scope["path"], headers=headers, content=await request.body()
        )
        answer = await client.send(sent, stream=True)
        kept = {k: v for k, v in answer.headers.items() if k not in ("content-length", "transfer-encoding")}
        response = StreamingResponse(answer.aiter_raw(), status_code=answer.status_code, headers=kept)
        await response(scope, receive, send)
        await answer.aclose()

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _scenario_rows(out: Path) -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = {}
    for checks in sorted(out.glob("*/checks.json")):
        # the suite names each folder server-<scenario>-<ISO time with dashes>
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z?$", "", checks.parent.name.removeprefix("server-"))
        rows[name] = json.loads(checks.read_text())
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conformance", required=True, help="the suite's `conformance` script")
    ap.add_argument("--node", default="node", help="a Node >= 22 binary")
    ap.add_argument("--scenario", action="append", help="only these scenarios (default: all active)")
    ap.add_argument("--suite", default="active", help="the suite's --suite: active, all or pending")
    ap.add_argument("--out", type=Path, help="keep the suite's results here")
    ap.add_argument(
        "--check", action="store_true",
        help="exit 1 unless every scenario that applies to docshelf ran and passed (CI)",
    )  # fmt: skip
    args = ap.parse_args()
    print("$", " ".join(sys.argv), f"| load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    tmp = Path(tempfile.mkdtemp(prefix="docshelf-conf-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    token = "conformance-" + os.urandom(12).hex()
    env.update(DOCSHELF_EMBED__MODEL="hash", DOCSHELF_SERVER__TOKEN=token, XDG_DATA_HOME=str(tmp / "xdg"))
    shutil.copytree(ROOT / "samples" / "corpus", tmp / "corpus")
    data = tmp / "data"
    cli = [sys.executable, "-m", "docshelf"]
    subprocess.run([*cli, "index", str(tmp / "corpus"), "--data-dir", str(data)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    port, front = _free_port(), _free_port()
    with open(tmp / "serve.log", "wb") as log:
        serve = subprocess.Popen(
            [*cli, "serve", "--http", "--port", str(port), "--data-dir", str(data)], env=env, stderr=log
        )
    try:
        _wait_port(port, serve)
        threading.Thread(target=_proxy, args=(f"http://127.0.0.1:{port}", token, front), daemon=True).start()
        _wait_port(front, serve)
        out = args.out or tmp / "results"
        scenarios = args.scenario or [None]
        for scenario in scenarios:
            url = f"http://localhost:{front}/mcp"
            cmd = [args.node, args.conformance, "server", "--url", url, "--suite", args.suite, "-o", str(out)]
            cmd += ["--scenario", scenario] if scenario else []
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            with (tmp / "suite.log").open("a") as suite_log:
                suite_log.write(run.stdout + run.stderr)
    finally:
        serve.terminate()
        serve.wait(10)
    rows = _scenario_rows(out)
    print(f"\nresults in {out}; suite output in {tmp / 'suite.log'}\n")
    print("| scenario | checks | passed | failed | warnings | docshelf? |")
    print("|---|---:|---:|---:|---:|---|")
    for name, checks in sorted(rows.items()):
        graded = [c for c in checks if c["status"] in ("SUCCESS", "FAILURE", "WARNING")]
        count = {s: sum(c["status"] == s for c in graded) for s in ("SUCCESS", "FAILURE", "WARNING")}
        kind = "yes" if name in GENERIC else "n/a (reference tool)"
        passed, failed, warned = count["SUCCESS"], count["FAILURE"], count["WARNING"]
        print(f"| {name} | {len(graded)} | {passed} | {failed} | {warned} | {kind} |")
    print()
    bad = []
    for name, checks in sorted(rows.items()):
        for c in checks:
            if c["status"] in ("FAILURE", "WARNING") and name in GENERIC:
                print(f"{name}: {c['status']} {c['id']}: {c.get('errorMessage', '')}")
                bad.append(name)
    wanted = GENERIC & set(args.scenario) if args.scenario else GENERIC
    missing = sorted(wanted - set(rows))
    if missing:
        print("did not run:", ", ".join(missing))
    if args.check and (bad or missing):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
