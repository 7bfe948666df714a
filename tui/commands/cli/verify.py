"""``moot verify SESSION``: every claim of a session re-checked from the file alone."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tui.commands.cli.say import err, out
from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from tui.engine.record.signing import Span


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", type=path_arg, help="the session file to check")
    parser.add_argument("--json", action="store_true", help="print the claims as one JSON object")
    parser.add_argument(
        "--trusted",
        action="store_true",
        help="also fail (exit 4) unless every record is signed by your key or one you trust",
    )


def run(args: argparse.Namespace) -> int:
    from tui.engine.basics.errors import MootInputError
    from tui.engine.record.keys import trusted_keys
    from tui.engine.record.verify import Trust, summary_lines, verify_file
    from tui.render.textsafe import json_text

    try:
        keys, problems = trusted_keys()
    except MootInputError as unreadable:  # your own key unreadable: say so, and trust no key
        keys, problems = [], [f"{unreadable.source}: {p}" for p in unreadable.problems]
    for problem in problems:
        err(f"moot: warning: {problem}")
    own = next((k.fingerprint for k in keys if k.own), None)
    trust = Trust({k.fingerprint: k.name for k in keys}, required=args.trusted, own=own)
    report = verify_file(args.session, trust)  # never writes; an unreadable file is exit 2
    if args.json:
        print(json_text(report.as_json()))
    else:
        for line in summary_lines(report):
            out(line)
    if args.trusted and not report.ok:
        _earlier_key_hint(report.signers, trust.keys)
    return ExitCode.DECIDED if report.ok else ExitCode.VERIFY_FAILED


def _earlier_key_hint(signers: Sequence[Span], trusted: Mapping[str, str]) -> None:
    """A signer that was your own key before moot made a new one is named as yours."""
    from tui.engine.record.keys import earlier_keys

    earlier = set(earlier_keys())
    for s in signers:
        if s.public in earlier and s.fingerprint not in trusted:
            err(
                f"moot: {s.fingerprint} was your signing key before moot made a new one "
                "(its file was lost); to trust it, save the next line in a file and run "
                "`moot keys trust FILE`:"
            )
            err(f"{s.public} earlier-key")
