"""The arguments several commands share, and the checks on them argparse cannot make."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from tui.pathlimits import path_arg

THEME_HELP = "console theme for this run (not saved; switch with ctrl+p to remember one)"
ON_UNRESOLVED_HELP = "headless: end with exit code 3 (default), or ask on the terminal"


def protocol_help() -> dict[str, str]:
    """Each registered protocol (built in or from ``moot.protocols``) with its one line."""
    from tui.engine.protocols import PROTOCOLS

    return {name: p.description or "(no description)" for name, p in PROTOCOLS.items()}


class ProtocolNames:
    """The registered protocols' names, read when argparse first checks or shows them."""

    def __iter__(self) -> Iterator[str]:
        return iter(protocol_help())

    def __contains__(self, name: object) -> bool:
        return name in protocol_help()


def sessions_dir_option(parser: argparse.ArgumentParser) -> None:
    """``--sessions-dir`` after the command too; unset there, the one before it stands."""
    parser.add_argument(
        "--sessions-dir", type=path_arg, default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )


def theme_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theme", default=argparse.SUPPRESS, help=THEME_HELP)


def allow_read_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-read",
        action="append",
        default=[],
        type=path_arg,
        metavar="PATH",
        help="also let the spec's documents and its files tools' roots come from this file "
        "or folder (repeatable); by default only the spec's own folder tree is read",
    )


def allow_tools_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-tools",
        action="store_true",
        help="start the [[tools]] a file names (the programs it runs, the folders it reads) "
        "or let a fork keep them; without it a spec's MCP commands never start, and a "
        "session's start only when keys you trust signed the records naming them",
    )


def allow_tool_writes_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-tool-writes",
        action="store_true",
        help="also offer debaters the calls a [[tools]] entry lists in calls that its MCP "
        "server does not mark read-only (they may change files); by default a lookup only reads",
    )


def lookup_options(parser: argparse.ArgumentParser) -> None:
    """What a run's lookups may read, start and change: ``--allow-read``, ``--allow-tools``,
    ``--allow-tool-writes``."""
    allow_read_option(parser)
    allow_tools_option(parser)
    allow_tool_writes_option(parser)


def allowed(args: argparse.Namespace) -> list[str]:
    """``--allow-read`` paths, each one that exists (a typo must not pass unnoticed)."""
    from tui.engine.basics.errors import MootInputError

    given: list[str] = getattr(args, "allow_read", [])
    missing = [p for p in given if not os.path.exists(p)]
    if missing:
        raise MootInputError("--allow-read", [f"{p}: no such file or folder" for p in missing])
    return given


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be 1 or more")
    return value


def port(text: str) -> int:
    """A TCP port to listen on; out of range, the server would listen on another than the
    URL names. 0 asks the system for a free one, which the printed URL then names: a
    script that starts moot never races another program for a port it picked."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value}: a port is 0 (any free one) to 65535")
    return value
