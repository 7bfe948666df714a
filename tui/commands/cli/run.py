"""``moot run SPEC``: a debate live in the console, or headless with ``--headless``."""

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
from tui.commands.cli.say import err
from tui.pathlimits import path_arg

if TYPE_CHECKING:
    from tui.engine.specs.spec import Spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sessions_dir_option(parser)
    parser.add_argument(
        "spec", type=path_arg, help="the debate spec (TOML); see moot new and moot validate"
    )
    parser.add_argument("--headless", action="store_true", help="no console; print a report")
    parser.add_argument(
        "--out", type=path_arg, help="session file to write (default: a new file in sessions)"
    )
    theme_option(parser)
    parser.add_argument(
        "--on-unresolved", choices=["end", "prompt"], default="end", help=ON_UNRESOLVED_HELP
    )
    parser.add_argument(
        "--json", action="store_true", help="headless: print the result as one JSON object"
    )
    lookup_options(parser)
    parser.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip checking each debater's model, key and api_base before the session starts",
    )


def run(args: argparse.Namespace) -> int:
    if not args.headless:
        from tui.commands.cli.console import launch_console

        return launch_console(args)
    from tui.commands.cli.headless_run import run_to_the_end
    from tui.engine.record.live import LiveSession
    from tui.engine.specs.spec import read_spec_file
    from tui.providers.registry import provider_for
    from tui.tools.toolbox import run_tools

    spec, raw = read_spec_file(args.spec, allowed(args))
    tools = run_tools(
        spec,
        args.spec,
        allowed(args),
        allow_tools=args.allow_tools,
        writes=args.allow_tool_writes,
    )
    _checked_start(spec, args)
    session = LiveSession.start(  # the name is chosen again here, so one taken since is passed
        spec,
        raw,
        provider_for,
        out=args.out,
        directory=args.sessions_dir,
        spec_source=args.spec,
        tools=tools,
    )
    try:
        return run_to_the_end(session, args)
    finally:
        session.close()


def _checked_start(spec: Spec, args: argparse.Namespace) -> None:
    """That the session can be written, and every model reached, before it exists."""
    from tui.engine.basics.errors import MootInputError
    from tui.engine.record.live import session_target

    session_target(spec.debate.title, out=args.out, directory=args.sessions_dir)
    if not args.no_preflight:
        from tui.providers.preflight import document_routes, preflight

        problems = preflight(spec)
        if problems:
            raise MootInputError(f"{args.spec}: preflight (skip with --no-preflight)", problems)
        for line in document_routes(spec):  # what leaves the machine, before anything does
            err(f"moot: {line}")
    from tui.providers.preflight import tool_calls

    for line in tool_calls(spec, args.allow_tool_writes):  # what a lookup may do, always said
        err(f"moot: {line}")
