"""The command reference page, written from the command line's own argparse definitions
(`tui.cli._parser`) at every build: each command's `--help`, so no option is missing or stale."""

from __future__ import annotations

import argparse
import functools

from tui.cli import _parser

WIDTH = 88  # the help as a terminal this wide shows it, whatever the builder's is


def _commands(
    parser: argparse.ArgumentParser, name: str
) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """``parser`` and every subcommand under it, depth first, each with its one-line help."""
    found: list[tuple[str, str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for sub_name, sub in action.choices.items():
            if sub_name not in helps:
                continue  # an alias: its command is listed once, under its own name
            full = f"{name} {sub_name}"
            found.append((full, helps[sub_name], sub))
            found += _commands(sub, full)
    return found


def _help(parser: argparse.ArgumentParser) -> str:
    parser.formatter_class = functools.partial(parser.formatter_class, width=WIDTH)
    return parser.format_help().rstrip()


def command_reference() -> str:
    """The whole page, in Markdown."""
    top = _parser()
    commands = _commands(top, "moot")
    lines = [
        "# Commands",
        "",
        "Every command's `--help`, written from moot's own command-line definitions",
        "(`tui/commands/cli/`) each time the site is built. The guides say what each is for.",
        "",
        "| command | does |",
        "| --- | --- |",
        "| [`moot`](#moot) | the console's home screen |",
    ]
    for full, summary, _ in commands:
        anchor = full.replace(" ", "-")
        lines.append(f"| [`{full}`](#{anchor}) | {summary.replace('|', '&#124;')} |")
    lines += ["", "## moot {#moot}", "", "```text", _help(top), "```", ""]
    for full, summary, parser in commands:
        anchor = full.replace(" ", "-")
        lines += [f"## {full} {{#{anchor}}}", "", summary, "", "```text", _help(parser), "```", ""]
    return "\n".join(lines)
