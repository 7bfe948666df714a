"""``moot outcomes``: how often decisions held, over a folder of sessions."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import sessions_dir_option
from tui.pathlimits import path_arg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sessions_dir_option(parser)
    parser.add_argument(
        "paths",
        nargs="*",
        type=path_arg,
        metavar="PATH",
        help="session files or folders (default: the sessions folder)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument(
        "--by",
        choices=["protocol", "rule", "decider", "debater"],
        help="also give the figures for each protocol, decision rule, decider or debater",
    )
    parser.add_argument(
        "--out", type=path_arg, metavar="FILE.svg", help="also write the calibration plot as SVG"
    )


def run(args: argparse.Namespace) -> int:
    from tui.commands.outcomes import outcomes

    return outcomes(args.paths, args.sessions_dir, as_json=args.json, by=args.by, svg=args.out)
