"""The root of the command line: the options given before any command (`--data-dir`, `--config`,
`-v`, `--version`), usage errors in one plain line, and help that fits 80 columns.

typer draws a usage error as a usage line, a hint and a boxed panel, and its help shows each
parameter's Python type (`<list[str]>`, `<bool>` on a flag): the group here says a usage error as
`error: ...; did you mean ...? (see docshelf search --help)` and gives every parameter a metavar.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from docshelf.cli.common import given_before
from docshelf.cli.logs import setup_logging
from docshelf.cli.output import err, message
from docshelf.cli.pipe import hang_up, reader_gone

__all__ = ["DocshelfGroup", "root", "usage_line"]


def _version(value: bool) -> None:
    if value:
        from docshelf import __version__

        typer.echo(f"docshelf {__version__}")
        raise typer.Exit()


def root(
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="debug logs on stderr, other libraries' warnings too")
    ] = False,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", metavar="FILE", help="docshelf.toml to read (a command's own --config wins)"
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir", metavar="DIR", readable=False, help="where the index lives (a command's own wins)"
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    setup_logging(verbose)
    given_before(config, data_dir)


def _near(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def _options(command: Any) -> list[str]:
    return [
        o for p in getattr(command, "params", ()) for o in (*p.opts, *p.secondary_opts) if o.startswith("-")
    ]


def usage_line(exc: Any) -> str:
    """A typer/click usage error as one line: what was wrong, the near option or command, where
    to read more. Read by attribute (typer vendors click since 0.26: no class to import)."""
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", "docshelf") or "docshelf"
    see = f" (see {path} --help)"
    option = getattr(exc, "option_name", None)
    param = getattr(exc, "param", None)
    text = str(getattr(exc, "message", "") or exc).strip()
    if option is not None and hasattr(exc, "possibilities"):  # NoSuchOption
        known = list(getattr(exc, "possibilities", None) or _options(getattr(ctx, "command", None)))
        return f"no such option {option}{_near(option, known)}{see}"
    if text.startswith("No such command"):
        name = text.removeprefix("No such command").split(".")[0].strip(" '\"")
        group = getattr(ctx, "command", None)
        commands = list(group.list_commands(ctx)) if group is not None and ctx is not None else []
        return f"no such command {name}{_near(name, commands)}{see}"
    if param is not None and hasattr(exc, "param_type"):  # MissingParameter
        kind = getattr(exc, "param_type", None) or getattr(param, "param_type_name", "argument")
        shown = "/".join(o for o in param.opts if o.startswith("-")) or (param.metavar or param.name).upper()
        return f"missing {kind} {shown}{see}"
    if param is not None:  # BadParameter: a value that does not fit its option
        shown = "/".join(o for o in param.opts if o.startswith("-")) or (param.metavar or param.name).upper()
        return f"invalid value for {shown}: {text}{see}"
    text = text.rstrip(".")
    return f"{text[:1].lower()}{text[1:]}{see}"


@contextmanager
def _one_line() -> Iterator[None]:
    try:
        yield
    except typer.TyperException as exc:
        # the usage errors (exit code 2); `docshelf` alone asks for help, which typer prints
        if getattr(exc, "exit_code", None) != 2 or type(exc).__name__ == "NoArgsIsHelpError":
            raise
        err.print(message(("error:", "red"), f" {usage_line(exc)}"))
        raise typer.Exit(2) from None
    except OSError as exc:  # click would exit 1, our "no results"
        if not reader_gone(exc):
            raise
        raise typer.Exit(hang_up()) from None


def _reflowed(text: str | None) -> str | None:
    """``text`` with each paragraph on one line, for the terminal to wrap: typer keeps a
    docstring's line breaks, and a line cut at 100 columns was cut again at 80."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)


def _plain_metavars(command: Any) -> None:
    """A metavar for each parameter: help shows it instead of the Python type; a flag and an
    argument (its name says it) show none."""
    help_option = command.get_help_option(typer.Context(command))  # made on first use, not a param
    for param in [*getattr(command, "params", ()), *([help_option] if help_option else [])]:
        if getattr(param, "_docshelf_tidy", False):
            continue
        flag = getattr(param, "is_flag", False)
        if param.metavar is None:
            param.metavar = "" if flag else (param.name or "value").upper().replace("_", "-")
        shown = None if flag or param.param_type_name == "argument" else param.metavar or None
        param.display_type_rich = lambda ctx, shown=shown: shown
        param._docshelf_tidy = True


class DocshelfGroup(TyperGroup):
    """The `docshelf` group: one-line usage errors, plain metavars in every command's help."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:  # fmt: skip
        _plain_metavars(self)
        for command in self.commands.values():
            _plain_metavars(command)
            command.help = _reflowed(command.help)
        with _one_line():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        with _one_line():
            return super().invoke(ctx)
