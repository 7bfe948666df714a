"""``moot resume SESSION``: an interrupted session continued, in the console or headless."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tui.commands.cli.options import (
    ON_UNRESOLVED_HELP,
    allowed,
    lookup_options,
    sessions_dir_option,
    theme_option,
)
from tui.commands.cli.say import err, out
from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg

if TYPE_CHECKING:
    from tui.engine.record.live import LiveSession


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sessions_dir_option(parser)
    parser.add_argument("session", type=path_arg, help="the session file to continue")
    parser.add_argument("--headless", action="store_true", help="no console; print a report")
    theme_option(parser)
    parser.add_argument(
        "--on-unresolved", choices=["end", "prompt"], default="end", help=ON_UNRESOLVED_HELP
    )
    parser.add_argument(
        "--force", action="store_true", help="resume even if the hash chain is broken"
    )
    lookup_options(parser)
    parser.add_argument(
        "--json", action="store_true", help="headless: print the result as one JSON object"
    )
    parser.add_argument(
        "--raise-budget",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="headless: a higher cap, then go on (budget.max_tokens=500000, "
        "debaters.critic.budget.max_cost_usd=2)",
    )


def run(args: argparse.Namespace) -> int:
    if not args.headless:
        from tui.commands.cli.console import launch_console

        return launch_console(args)
    from tui.commands.cli.headless_run import run_to_the_end
    from tui.commands.headless import result_json
    from tui.engine.basics.vocab import ESCALATE
    from tui.engine.record.live import LiveSession
    from tui.providers.registry import provider_for
    from tui.tools.toolbox import session_tools

    allowed_paths = allowed(args)
    session = LiveSession.resume(
        args.session,
        provider_for,
        force=args.force,
        tools_for=lambda data: session_tools(
            data, allowed_paths, allow_tools=args.allow_tools, writes=args.allow_tool_writes
        ),
    )
    try:
        if session.tools is not None:  # what a lookup may do, as on a run
            from tui.providers.preflight import tool_calls

            for line in tool_calls(session.engine.spec, args.allow_tool_writes):
                err(f"moot: {line}")
        result = session.store.result
        if result is not None and result.get("decision") != ESCALATE:
            if args.json:
                print(result_json(session, ExitCode.DECIDED))
            else:
                out(f"{args.session}: already decided: {result.get('decision')}")
            return ExitCode.DECIDED
        _raise_budgets(session, args.raise_budget)
        return run_to_the_end(session, args)
    finally:
        session.close()


def _raise_budgets(session: LiveSession, raises: list[str]) -> None:
    """``--raise-budget KEY=VALUE``: every raise checked before any is journalled."""
    from tui.engine.basics.errors import MootInputError
    from tui.engine.run.budget import parse_cap

    parsed, problems = [], []
    for item in raises:
        key, _, text = item.partition("=")
        try:
            scope, cap = parse_cap(key)
            value = float(text)
            session.engine.budget.check_raise(scope, cap, value)
            parsed.append((scope, cap, int(value) if cap == "max_tokens" else value))
        except ValueError as bad:
            problems.append(str(bad) if key and text else f"{item}: expected KEY=VALUE")
    if problems:
        raise MootInputError("--raise-budget", problems)
    for scope, cap, value in parsed:
        session.engine.raise_budget(cap, value, scope or None)
