"""A headless run or resume to its end: ``--json`` keeps stdout for the result, and
Ctrl+C names the way back."""

from __future__ import annotations

import argparse
import shlex
from typing import TYPE_CHECKING

from tui.commands.cli.say import err
from tui.exitcodes import ExitCode

if TYPE_CHECKING:
    from tui.engine.record.live import LiveSession


def run_to_the_end(session: LiveSession, args: argparse.Namespace) -> int:
    from tui.commands.headless import headless_console, result_json, run_headless

    try:
        code = run_headless(session, args.on_unresolved, headless_console(stderr=args.json))
    except KeyboardInterrupt:
        err(f"moot: interrupted; saved up to its last completed turn: {session.path}")
        err(f"continue it with: moot resume {shlex.quote(str(session.path))}")
        if args.json:  # stdout still gets its one object
            print(result_json(session, ExitCode.INTERRUPTED))
        return ExitCode.INTERRUPTED
    if args.json:
        print(result_json(session, code))
    return code
