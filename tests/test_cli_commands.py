"""The command line imports only the module of the command it runs: its table of commands must
name every command each module registers, and nothing else."""

from __future__ import annotations

import importlib

import pytest
import typer
from typer.main import get_command

from docshelf.cli.main import COMMANDS, MODULES, app, command_named, make_app


def _registered(module: str) -> set[str]:
    one = typer.Typer()
    importlib.import_module(f"docshelf.cli.{module}").register(one)
    one.callback()(lambda: None)  # a group even with one command
    return set(get_command(one).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("module", MODULES)
def test_the_table_names_each_modules_commands(module: str) -> None:
    assert _registered(module) == {c for c, m in COMMANDS.items() if m == module}


def test_the_table_names_no_other_module_and_the_full_app_has_every_command() -> None:
    assert set(COMMANDS.values()) == set(MODULES)
    assert set(get_command(app).commands) == set(COMMANDS)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["search", "q"], "search"),
        (["--data-dir", "d", "-v", "search", "q"], "search"),
        (["--config=c.toml", "--verbose", "status"], "status"),
        (["--data-dir", "search", "ls"], "ls"),  # "search" is the option's value here
        (["--help"], None),
        (["--version"], None),
        ([], None),
        (["serch", "q"], None),  # a typo: every command is loaded for "did you mean search?"
        (["-x", "search"], None),
    ],
)
def test_the_command_a_run_names(argv: list[str], named: str | None) -> None:
    assert command_named(argv) == named


def test_an_app_for_one_command_has_that_modules_commands_only() -> None:
    assert set(get_command(make_app("show")).commands) == {"show", "read"}  # type: ignore[attr-defined]
