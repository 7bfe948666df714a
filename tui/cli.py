"""The ``moot`` command line: a table of commands, each command's module imported only when
that command is parsed (``tui/commands/cli/``), so start-up pays for one command at most."""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol, cast

from tui.commands.cli.options import THEME_HELP, protocol_help
from tui.commands.cli.say import err
from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg
from tui.plural import counted

if TYPE_CHECKING:
    from collections.abc import Sequence

    _SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:  # generic only to the type checker
    _SubParsers = argparse._SubParsersAction


class Command(NamedTuple):
    """A command's module, its line in ``moot --help``, and the kind of file it expects:
    a file of the other kind is refused by name, with the command it wants."""

    module: str
    help: str
    wants: Literal["spec", "session"] | None = None


COMMANDS: dict[str, Command] = {
    "run": Command(
        "tui.commands.cli.run", "run a debate live, or headless with --headless", "spec"
    ),
    "resume": Command("tui.commands.cli.resume", "continue an interrupted session", "session"),
    "replay": Command(
        "tui.commands.cli.replay", "replay a saved session in the console", "session"
    ),
    "validate": Command("tui.commands.cli.validate", "list every problem in a spec", "spec"),
    "export": Command("tui.commands.cli.export", "export a session as a report or JSON", "session"),
    "verify": Command(
        "tui.commands.cli.verify",
        "re-check every claim of a session from the file alone (exit 4 if one fails)",
        "session",
    ),
    "adopt": Command(
        "tui.commands.cli.adopt",
        "vouch for the unsigned records of a session of your own (shows them, then asks)",
    ),
    "outcome": Command(
        "tui.commands.cli.outcome",
        "record what became of a decision, signed (several over time; the latest counts)",
        "session",
    ),
    "outcomes": Command(
        "tui.commands.cli.outcomes",
        "how often decisions held, with a Wilson interval, Brier scores and a calibration plot",
    ),
    "keys": Command(
        "tui.commands.cli.keys", "your session-signing key, and the keys whose signatures you trust"
    ),
    "fork": Command(
        "tui.commands.cli.fork",
        "a new session holding a saved session's first N turns, to go on from there",
        "session",
    ),
    "new": Command("tui.commands.cli.new", "write a commented spec to start from"),
    "batch": Command(
        "tui.commands.cli.batch", "run many specs headless in one process, N at a time"
    ),
    "bench": Command(
        "tui.commands.cli.bench",
        "accuracy of one answer, a vote and a debate on generated, checked items",
    ),
    "inbox": Command(
        "tui.commands.cli.inbox", "sessions that ended unresolved, waiting for a decision"
    ),
    "notify": Command(
        "tui.commands.cli.notify",
        "send a session awaiting a decision to the config file's [[notify]] targets again",
        "session",
    ),
    "decide": Command(
        "tui.commands.cli.decide",
        "record an operator decision on an unresolved session (exit 2 if refused)",
        "session",
    ),
    "watch": Command(
        "tui.commands.cli.watch",
        "follow a session another process is writing (read-only, live)",
        "session",
    ),
    "mcp": Command(
        "tui.commands.cli.mcp",
        "serve the debates as MCP tools over stdio (or --http), for coding agents "
        "(extra: moot[mcp])",
    ),
    "serve": Command(
        "tui.commands.cli.serve", "serve the console to a browser (extra: moot[serve])"
    ),
}

SHOWN_PROBLEMS = 50  # a file of 100,000 mistakes is said in a screenful, the rest counted


class CommandModule(Protocol):
    """What each module in ``COMMANDS`` gives: its arguments, and the command itself."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _module(name: str) -> CommandModule:
    return cast("CommandModule", importlib.import_module(COMMANDS[name].module))


class _Commands(_SubParsers):
    """The commands' parsers, each given its arguments by its module when first needed:
    on parsing that command, or all at once for the reference of every command."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.filled: set[str] = set()

    def fill(self, name: str) -> None:
        if name in COMMANDS and name not in self.filled:
            _module(name).add_arguments(self.choices[name])
            self.filled.add(name)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        if isinstance(values, list) and values:
            self.fill(str(values[0]))
        super().__call__(parser, namespace, values, option_string)


def _epilog() -> str:
    protocols = "\n".join(f"  {name:<10} {what}" for name, what in protocol_help().items())
    meanings = {
        ExitCode.DECIDED: "decided (verify: every claim holds)",
        ExitCode.INTERNAL: "internal error (a bug; reported without a traceback)",
        ExitCode.BAD_INPUT: "bad spec, session or path, refused decision, unreachable model",
        ExitCode.UNRESOLVED: "ended unresolved (escalated, no operator decision)",
        ExitCode.VERIFY_FAILED: "moot verify: a claim does not hold",
        ExitCode.INTERRUPTED: "interrupted (Ctrl+C, or quit while running); the session is saved",
    }
    codes = "\n".join(f"  {int(code):<10} {meanings[code]}" for code in ExitCode)
    return f"protocols:\n{protocols}\n\nexit codes:\n{codes}"


class _HelpListsProtocols(argparse.ArgumentParser):
    """``moot --help`` lists the protocols; parsing any command line never imports their
    registry (pydantic and every protocol: most of the start-up before the console paints)."""

    def format_help(self) -> str:
        self.epilog = _epilog()  # as registered now: the parser outlives a call to main
        return super().format_help()


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when it is asked for."""

    def __init__(self, option_strings: list[str], dest: str, **_kwargs: object) -> None:
        help_text = "show moot's version and exit"
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help_text)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        from tui import __version__

        print(f"moot {__version__}")
        parser.exit()


def _parser(*, every_command: bool = True) -> argparse.ArgumentParser:
    """The whole command line; without ``every_command``, a command's own arguments are
    added only when that command is parsed (what ``main`` does)."""
    p = _HelpListsProtocols(
        prog="moot",
        description="Run structured LLM debates live, headless, or from a file.\n"
        "With no command: the console's home screen.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action=_Version)
    p.add_argument(
        "--sessions-dir", type=path_arg, help="where sessions are saved (default ./sessions)"
    )
    p.add_argument("--theme", help=THEME_HELP)
    commands = p.add_subparsers(
        dest="command", action=_Commands, parser_class=argparse.ArgumentParser
    )
    assert isinstance(commands, _Commands)
    for name, command in COMMANDS.items():
        commands.add_parser(name, help=command.help)
        if every_command:
            commands.fill(name)
    return p


def _print_input_error(problem: Exception) -> None:
    from tui.engine.basics.errors import MootInputError
    from tui.engine.basics.redact import redact

    assert isinstance(problem, MootInputError)
    err(f"moot: {redact(problem.source)}: {counted(len(problem.problems), 'problem')}")
    for line in problem.problems[:SHOWN_PROBLEMS]:  # a message may quote what was given
        err(f"  - {redact(line)}")
    if len(problem.problems) > SHOWN_PROBLEMS:
        err(f"  … and {counted(len(problem.problems) - SHOWN_PROBLEMS, 'more problem')}")


def main(argv: list[str] | None = None) -> int:
    code = _main(argv)
    local = sys.modules.get("tui.providers.local")
    if local is not None:  # the embedded model ran: a generation it left must not hold the exit
        local.exit_past_generations(code)
    return code


@functools.cache
def _command_line() -> argparse.ArgumentParser:
    """The parser ``main`` uses, built once a process: a command's arguments are added
    when it is first parsed, and parsing changes nothing else. Building it took 5 ms of
    CPU a call (argparse looks for translations of its words on each parser it makes), as
    much as a validation, for whatever calls ``main`` in process again."""
    return _parser(every_command=False)


def _main(argv: list[str] | None) -> int:
    args = _command_line().parse_args(argv)
    from tui.engine.basics.errors import MootInputError

    try:
        return _dispatch(args)
    except MootInputError as problem:
        _print_input_error(problem)
        return ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        err("moot: interrupted; the session is saved up to its last completed turn")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # the reader stopped reading (``| head``): not an error
        from tui.commands.headless import silence_stdout

        silence_stdout()
        return ExitCode.DECIDED
    except Exception as bug:  # never a traceback unless asked for
        if os.environ.get("MOOT_DEBUG"):
            raise
        err(f"moot: internal error: {type(bug).__name__}: {bug} (set MOOT_DEBUG=1 for details)")
        return ExitCode.INTERNAL


def _dispatch(args: argparse.Namespace) -> int:
    theme = getattr(args, "theme", None)
    if theme is not None:  # refused where no console shows it too: a typo is never silent
        from tui.app.launch import theme_problem

        if problem := theme_problem(theme):
            err(f"moot: {problem}")
            return ExitCode.BAD_INPUT
    if args.command is None:  # the home screen
        from tui.commands.cli.console import launch_console

        return launch_console(args)
    wants = COMMANDS[args.command].wants
    if wants is not None:
        from tui.filekind import refuse_wrong_kind

        refuse_wrong_kind(args.spec if wants == "spec" else args.session, wants)
    return _module(args.command).run(args)
