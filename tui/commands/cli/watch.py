"""``moot watch SESSION``: follow a session another process is writing, read-only."""

from __future__ import annotations

import argparse

from tui.pathlimits import path_arg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", type=path_arg, help="the session file to follow")


def run(args: argparse.Namespace) -> int:
    from tui.commands.watch import watch

    return watch(args.session)
