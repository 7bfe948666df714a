"""``moot serve``: the console served to a browser, or a link to decide one session."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import port, sessions_dir_option


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sessions_dir_option(parser)
    parser.add_argument(
        "--port",
        type=port,
        default=8000,
        help="port (default 8000; 0 takes any free one, which the printed URL names)",
    )
    parser.add_argument(
        "--host", default="localhost", help="address to bind (default localhost; loopback only)"
    )
    parser.add_argument(
        "--public",
        action="store_true",
        help="allow a --host other than loopback (the token stays required)",
    )
    parser.add_argument(
        "--no-token",
        action="store_true",
        help="serve loopback without the URL token (Host and Origin are still checked)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another host name browsers may use to reach the server (repeatable)",
    )
    parser.add_argument(
        "--decide-link",
        metavar="SESSION",
        help="print a link to decide SESSION (its name or path in the sessions folder) on "
        "this server's decide page, good once for 7 days, then exit",
    )


def run(args: argparse.Namespace) -> int:
    if args.decide_link:
        from tui.commands.serve import decide_link

        return decide_link(args.decide_link, args.host, args.port, args.sessions_dir)
    from tui.commands.serve import serve

    return serve(
        args.host,
        args.port,
        args.sessions_dir,
        public=args.public,
        no_token=args.no_token,
        allow_hosts=args.allow_host,
    )
