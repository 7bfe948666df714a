"""``moot new PATH``: a commented spec to start from, for any registered protocol."""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.commands.cli.options import ProtocolNames
from tui.commands.cli.say import out
from tui.engine.basics.vocab import DEFAULT_PROTOCOL
from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=path_arg, help="the spec file to write (never overwritten)")
    parser.add_argument(
        "--protocol",
        default=DEFAULT_PROTOCOL,
        choices=ProtocolNames(),
        metavar="PROTOCOL",  # else argparse lists the choices as it builds the parser
        help="the protocol the spec starts from: %(choices)s (default %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    from tui.engine.basics.errors import MootInputError
    from tui.engine.basics.safeio import FileRefused, write_new
    from tui.templates import TEMPLATES

    path, protocol = args.path, args.protocol
    if protocol not in TEMPLATES:
        raise MootInputError(
            "--protocol", [f"unknown protocol {protocol!r}; expected one of {', '.join(TEMPLATES)}"]
        )
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:  # never over an existing file, never through a symlink
        write_new(target, TEMPLATES[protocol].format(name=target.name).encode("utf-8"))
    except FileRefused as err:
        raise MootInputError(path, [str(err)]) from None
    out(f"wrote {path}")
    return ExitCode.DECIDED
