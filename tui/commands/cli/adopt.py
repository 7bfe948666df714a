"""``moot adopt SESSION``: vouch for the unsigned records of a session of your own."""

from __future__ import annotations

import argparse
import sys

from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", type=path_arg, help="a session written before moot signed them")
    parser.add_argument("--yes", action="store_true", help="adopt without asking (you checked it)")


def run(args: argparse.Namespace) -> int:
    from tui.commands.adopt import adopt
    from tui.engine.basics.errors import MootInputError

    def ask(question: str) -> bool:
        if not sys.stdin.isatty():
            raise MootInputError(
                args.session, ["no terminal to ask on: read what it holds above, then --yes"]
            )
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")

    adopted = adopt(args.session, yes=args.yes, ask=ask, say=print)
    return ExitCode.DECIDED if adopted else ExitCode.UNRESOLVED  # 3: you said no
