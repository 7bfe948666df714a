"""``moot outcome SESSION``: what became of a decision, recorded and signed."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import sessions_dir_option
from tui.commands.cli.say import out
from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sessions_dir_option(parser)
    parser.add_argument("session", type=path_arg, help="the decided session file")
    held = parser.add_mutually_exclusive_group(required=True)
    for word, meaning in (("held", "it held"), ("failed", "it failed"), ("mixed", "some of each")):
        held.add_argument(
            f"--{word}", dest="outcome", action="store_const", const=word, help=meaning
        )
    parser.add_argument("--note", required=True, help="why, in words (kept in the file)")
    parser.add_argument(
        "--at",
        metavar="DATE",
        help="when it was known: YYYY-MM-DD (a UTC day) or an ISO datetime (default now)",
    )


def run(args: argparse.Namespace) -> int:
    from tui.commands.outcome import record_outcome

    record = record_outcome(args.session, args.outcome, args.note, args.at)
    out(f"recorded: {record['outcome']} at {record['at']}, signed; `moot verify` checks it")
    out(f"saved: {args.session}")
    return ExitCode.DECIDED
