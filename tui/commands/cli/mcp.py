"""``moot mcp``: the debates served as MCP tools, over stdio or streamable HTTP."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import allowed, lookup_options, port, sessions_dir_option
from tui.commands.cli.say import err
from tui.exitcodes import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sessions_dir_option(parser)
    parser.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip checking each debater's model, key and api_base before a run starts",
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="serve over MCP's streamable HTTP at /mcp instead of stdio, with a token printed "
        "at start; a run goes on when its client leaves",
    )
    parser.add_argument(
        "--port",
        type=port,
        help="with --http: port (default 8001; 0 takes any free one, which the URL names)",
    )
    parser.add_argument(
        "--host", help="with --http: address to bind (default 127.0.0.1; loopback only)"
    )
    parser.add_argument(
        "--public",
        action="store_true",
        help="with --http: allow a --host other than loopback (the token stays required)",
    )
    lookup_options(parser)


def run(args: argparse.Namespace) -> int:
    """Over stdio, stdout carries the protocol, so nothing is printed there."""
    import asyncio

    from tui.engine.basics.errors import MootInputError

    if not args.http and (args.port is not None or args.host is not None or args.public):
        raise MootInputError(
            "moot mcp", ["--port, --host and --public serve over HTTP: add --http"]
        )
    try:
        from tui.mcp_server import MootServer, serve_stdio
    except ImportError:
        raise MootInputError(
            "moot mcp", ["it needs the optional extra mcp: pip install 'moot[mcp]'"]
        ) from None
    from tui.engine.record.session import sessions_dir
    from tui.providers.preflight import preflight
    from tui.providers.registry import provider_for

    server = MootServer(
        sessions_dir(args.sessions_dir),
        provider_for,
        preflight=None if args.no_preflight else preflight,
        allow_read=allowed(args),
        allow_tools=args.allow_tools,
        tool_writes=args.allow_tool_writes,
    )
    if args.http:
        from tui.mcp_http import serve_http

        host = args.host or "127.0.0.1"
        port_number = 8001 if args.port is None else args.port  # 0: any free port
        asyncio.run(serve_http(server, host, port_number, public=args.public, say=err))
    else:
        asyncio.run(serve_stdio(server))
    return ExitCode.DECIDED
