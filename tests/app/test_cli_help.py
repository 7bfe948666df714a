"""``moot --help`` explains every option, the protocols and the exit codes."""

from __future__ import annotations

import argparse

import pytest

from tui.cli import _parser, main
from tui.commands.cli.options import protocol_help
from tui.engine.protocols import PROTOCOLS
from tui.exitcodes import ExitCode


def test_help_lists_protocols_and_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name in PROTOCOLS:
        assert f"  {name} " in out
    for code in ExitCode:
        assert f"\n  {int(code)} " in out


def test_protocol_help_is_each_protocols_own_description():
    assert protocol_help() == {name: p.description for name, p in PROTOCOLS.items()}
    assert all(protocol_help().values())


def test_every_option_and_argument_says_what_it_means():
    parser = _parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, sub in [("moot", parser), *subparsers.choices.items()]:
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            if action.help is None:
                missing.append(f"{name} {action.dest}")
    assert missing == []


def test_new_protocol_lists_its_choices(capsys):
    with pytest.raises(SystemExit):
        main(["new", "--help"])
    assert "debate, adversary, challenge, refine" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit) as exit_info:
        main(["new", "x.toml", "--protocol", "nope"])
    assert exit_info.value.code == ExitCode.BAD_INPUT
    assert "choose from" in capsys.readouterr().err
