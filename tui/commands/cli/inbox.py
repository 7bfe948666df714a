"""``moot inbox``: the sessions that ended unresolved and wait for a decision."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import sessions_dir_option
from tui.exitcodes import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sessions_dir_option(parser)
    parser.add_argument("--json", action="store_true", help="print them as a JSON list")


def run(args: argparse.Namespace) -> int:
    import json

    from tui.commands.inbox import awaiting, tally_text
    from tui.engine.record.session import sessions_dir as resolve
    from tui.notify import record
    from tui.render.textsafe import clean_line

    waiting = awaiting(resolve(args.sessions_dir))
    if args.json:
        listed = [
            {**a.as_json(), "notify": [d.as_json() for d in record.read(a.path)]} for a in waiting
        ]
        print(json.dumps(listed, indent=2))
        return ExitCode.DECIDED
    if not waiting:
        print("nothing awaits a decision")
    for a in waiting:
        told = record.summary(record.read(a.path))
        print(
            clean_line(
                f"{a.title}  [{a.protocol}, {a.why}, {tally_text(a.vote_tally)}]  {a.path}"
                + (f"  notify: {told}" if told else "")
            )
        )
    return ExitCode.DECIDED
