"""``moot notify SESSION``: a session awaiting a decision sent to the notify targets again."""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.commands.cli.say import err, out
from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg
from tui.plural import counted


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", type=path_arg, help="the unresolved session file")


def run(args: argparse.Namespace) -> int:
    from tui.notify.resend import resend

    deliveries, problems = resend(Path(args.session))
    for problem in problems:
        err(f"moot: warning: {problem}; the message has no decide link")
    for d in deliveries:
        said = "sent" if d.sent else f"failed after {counted(d.attempts, 'attempt')} ({d.reason})"
        out(f"{d.name}: {said}")
    return ExitCode.DECIDED if all(d.sent for d in deliveries) else ExitCode.BAD_INPUT
