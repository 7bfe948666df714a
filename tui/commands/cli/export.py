"""``moot export SESSION``: a session as Markdown, JSON or a decision record."""

from __future__ import annotations

import argparse
import sys

from tui.commands.cli.options import sessions_dir_option
from tui.commands.cli.say import err
from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sessions_dir_option(parser)
    parser.add_argument("session", type=path_arg, help="the session file to export")
    parser.add_argument(
        "--format",
        choices=["markdown", "json", "adr"],
        default="markdown",
        help="adr: an architecture decision record (MADR layout)",
    )
    parser.add_argument(
        "--output", "-o", type=path_arg, help="write to this file instead of stdout"
    )


def run(args: argparse.Namespace) -> int:
    from tui.engine.basics.errors import MootInputError
    from tui.engine.basics.safeio import FileRefused, write_new
    from tui.engine.record.session import load_session
    from tui.render.export import to_json, to_markdown

    session, fmt, output = args.session, args.format, args.output
    data = load_session(session)
    for warning in data.warnings:  # a torn tail was dropped: say so, even on success
        err(f"moot: warning: {session}: {warning}")
    if fmt == "adr":
        from tui.render.adr import to_adr

        text = to_adr(data)
    else:
        text = to_json(data) if fmt == "json" else to_markdown(data)
    if output:
        try:  # never over an existing file, never through a symlink
            write_new(output, (text + "\n").encode("utf-8"))
        except FileRefused as refused:
            raise MootInputError(output, [str(refused)]) from None
    else:
        sys.stdout.write(text + "\n")  # already sanitised for its format by tui.render.export
    return ExitCode.DECIDED
