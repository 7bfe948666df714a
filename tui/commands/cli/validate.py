"""``moot validate SPEC``: every problem in a spec, or what it sets up."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import allow_read_option, allowed
from tui.commands.cli.say import out
from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg
from tui.plural import counted


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", type=path_arg, help="the spec file to check")
    allow_read_option(parser)


def run(args: argparse.Namespace) -> int:
    from tui.engine.specs.sizing import outgrow_warning
    from tui.engine.specs.spec import read_spec_file

    path = args.spec
    spec, _ = read_spec_file(path, allowed(args))
    out(
        f"{path}: ok — {spec.debate.protocol}, {counted(len(spec.debaters), 'debater')}, "
        f"{counted(spec.max_rounds, 'round')}, threshold {spec.threshold}"
    )
    if outgrow := outgrow_warning(spec):  # valid, but the session could fill up
        out(f"{path}: warning: {outgrow}")
    return ExitCode.DECIDED
