"""``moot replay SESSION``: a saved session played again in the console, no model called."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import sessions_dir_option, theme_option
from tui.pathlimits import path_arg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sessions_dir_option(parser)
    parser.add_argument(
        "session", type=path_arg, help="the session file to replay (no model is called)"
    )
    theme_option(parser)


def run(args: argparse.Namespace) -> int:
    from tui.commands.cli.console import launch_console

    return launch_console(args)
