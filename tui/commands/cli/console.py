"""The console for ``moot run``, ``moot resume``, ``moot replay`` and the home screen."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import allowed


def launch_console(args: argparse.Namespace) -> int:
    from tui.app.launch import launch

    cmd = args.command
    theme = getattr(args, "theme", None)
    if cmd != "replay":  # a mistake in [telemetry] is said before the console takes the screen
        from tui.telemetry import settings

        settings()
    if cmd == "run":  # the console reads and preflights the spec after its first frame
        return launch(
            spec_path=args.spec,
            theme=theme,
            sessions_dir=args.sessions_dir,
            out=args.out,
            preflight=not args.no_preflight,
            allow_read=allowed(args),
            allow_tools=args.allow_tools,
            allow_tool_writes=args.allow_tool_writes,
        )
    if cmd == "resume":
        return launch(
            resume_path=args.session,
            theme=theme,
            sessions_dir=args.sessions_dir,
            force=args.force,
            allow_read=allowed(args),
            allow_tools=args.allow_tools,
            allow_tool_writes=args.allow_tool_writes,
        )
    if cmd == "replay":
        return launch(replay_path=args.session, theme=theme, sessions_dir=args.sessions_dir)
    return launch(theme=theme, sessions_dir=args.sessions_dir)
