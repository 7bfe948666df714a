"""``moot batch PATH…``: many specs run headless in one process, N at a time."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import allowed, lookup_options, positive, sessions_dir_option
from tui.pathlimits import path_arg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sessions_dir_option(parser)
    parser.add_argument(
        "paths", nargs="+", type=path_arg, metavar="PATH", help="spec files, or folders of specs"
    )
    parser.add_argument(
        "--concurrency", "-j", type=positive, default=4, help="debates at once (default 4)"
    )
    parser.add_argument(
        "--summary", type=path_arg, help="write a JSON summary naming every spec to this new file"
    )
    parser.add_argument(
        "--no-preflight", action="store_true", help="skip checking each spec's models first"
    )
    lookup_options(parser)


def run(args: argparse.Namespace) -> int:
    from tui.commands.batch import run_batch
    from tui.providers.preflight import preflight

    return run_batch(
        args.paths,
        concurrency=args.concurrency,
        directory=args.sessions_dir,
        summary_path=args.summary,
        preflight=None if args.no_preflight else preflight,
        allow_read=allowed(args),
        allow_tools=args.allow_tools,
        writes=args.allow_tool_writes,
    )
