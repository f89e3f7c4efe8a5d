"""Passwords in a PostgreSQL DSN never appear in messages or status, in any of the DSN's forms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docshelf.cli import app
from docshelf.config import redact_dsn

SECRET = "hunter2"


@pytest.mark.parametrize(
    "dsn",
    [
        f"postgresql://team:{SECRET}@db.internal/docs",
        f"postgresql://db.internal/docs?password={SECRET}",
        f"postgresql://team@db.internal:5433/docs?sslmode=require&password={SECRET}&application_name=x",
        f"postgres://team@db.internal/docs?PASSWORD={SECRET}",
        f"postgresql://team@db.internal/docs?sslpassword={SECRET}",
        f"postgresql://team:{SECRET}@db.internal/docs?password={SECRET}x",
        f"postgresql://team:p%40{SECRET}@db.internal/docs",  # an encoded "@" inside the password
        f"postgresql://team:{SECRET}@h1:5432,h2:5432/docs",  # several hosts
    ],
)
def test_redact_dsn_drops_every_password(dsn: str) -> None:
    shown = redact_dsn(dsn)
    assert SECRET not in shown, shown
    assert "db.internal" in shown or "h1" in shown  # still says which server


@pytest.mark.parametrize(
    "dsn",
    [
        f"postgresql://nobody@127.0.0.1:9/none?password={SECRET}",
        f"postgresql://nobody:{SECRET}%zz@127.0.0.1:9/none",  # the driver quotes the bad token
        f"postgresql://nobody@127.0.0.1:9/none?password={SECRET}%zz",
    ],
)
def test_a_password_stays_out_of_error_lines(
    dsn: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCSHELF_STORE", dsn)
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(app, ["status"])
    assert result.exit_code == 5 and "cannot open the PostgreSQL store" in result.stderr, result.output
    assert SECRET not in result.output and "Traceback" not in result.output


def test_a_query_password_stays_out_of_status_json(
    pg_database: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCSHELF_STORE", f"{pg_database}?password={SECRET}")  # the test server trusts
    monkeypatch.setenv("DOCSHELF_EMBED__MODEL", "hash")
    monkeypatch.setenv("DOCSHELF_STORE__DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(app, ["status", "--json"])
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    assert json.loads(result.stdout)["store"].startswith("postgresql://")
