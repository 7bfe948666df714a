"""``moot decide SESSION``: an operator decision on an unresolved session, or one more round."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import allowed, lookup_options
from tui.commands.cli.say import out
from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", type=path_arg, help="the unresolved session file")
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--vote", help="one of the spec's votes")
    chosen.add_argument("--value", help="the number decided, for a protocol that estimates one")
    parser.add_argument("--rationale", default="", help="why (required with --vote)")
    parser.add_argument(
        "--extend", action="store_true", help="instead add a round and continue headless"
    )
    lookup_options(parser)


def run(args: argparse.Namespace) -> int:
    from tui.engine.basics.errors import MootInputError

    if args.extend == bool(args.vote or args.value):
        raise MootInputError(
            "moot decide", ["give --vote or --value (with --rationale), or --extend"]
        )
    return _extend(args) if args.extend else _decide(args)


def _extend(args: argparse.Namespace) -> int:
    """A round more, run headless as ``moot resume --headless`` would."""
    from tui.commands.decide import not_awaiting
    from tui.commands.headless import run_headless
    from tui.engine.basics.errors import MootInputError
    from tui.engine.record.live import LiveSession
    from tui.engine.record.session import load_session
    from tui.providers.registry import provider_for
    from tui.tools.toolbox import session_tools

    why = not_awaiting(load_session(args.session))
    if why:
        raise MootInputError(args.session, [why])
    allowed_paths = allowed(args)
    session = LiveSession.resume(
        args.session,
        provider_for,
        tools_for=lambda data: session_tools(
            data, allowed_paths, allow_tools=args.allow_tools, writes=args.allow_tool_writes
        ),
    )
    try:
        return run_headless(session, extend_first=True)
    finally:
        session.close()


def _decide(args: argparse.Namespace) -> int:
    from tui.commands.decide import decide_session, flag_problem
    from tui.engine.basics.errors import MootInputError
    from tui.engine.basics.vocab import is_deferral
    from tui.engine.record.session import load_session

    if why := flag_problem(load_session(args.session).spec, "--vote" if args.vote else "--value"):
        raise MootInputError(args.session, [why])
    result = decide_session(args.session, args.vote or args.value, args.rationale)
    deferred = is_deferral(result.get("decision"), result.get("decision_rule"))
    if deferred:
        print("deferred: the session stays in the inbox with your rationale (still unresolved)")
    else:
        out(
            f"decided: {result.get('decision')} ({result.get('decision_rule')}, "
            f"by {result.get('decided_by')})"
        )
    out(f"saved: {args.session}")
    return ExitCode.UNRESOLVED if deferred else ExitCode.DECIDED
