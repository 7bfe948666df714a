"""``moot fork SESSION --at N``: a new session holding a saved one's first N turns."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import allow_tools_option
from tui.commands.cli.say import out
from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", type=path_arg, help="the session to fork")
    parser.add_argument("--at", type=int, required=True, metavar="N", help="keep turns 1 to N")
    parser.add_argument(
        "--out", type=path_arg, help="the new session file (default: SESSION-forkN.toml beside it)"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a spec key for the rest (debaters.critic.model=local, debate.max_rounds=4)",
    )
    allow_tools_option(parser)


def run(args: argparse.Namespace) -> int:
    from tui.engine.record.fork import fork

    path = fork(args.session, args.at, args.out, args.set, allow_tools=args.allow_tools)
    out(f"wrote {path}: turns 1 to {args.at} of {args.session}")
    out(f"continue it with: moot resume {path}")
    return ExitCode.DECIDED
