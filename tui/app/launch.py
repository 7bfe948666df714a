"""Entry point the CLI calls: ``moot``, ``moot run``, ``moot resume``, ``moot replay``.

Imports stay light: Textual and the app are imported here, the providers
(LiteLLM) only when a debate first asks for a model.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tui.exitcodes import ExitCode
from tui.render.textsafe import clean_line


def launch(
    *,
    spec_path: str | None = None,
    resume_path: str | None = None,
    replay_path: str | None = None,
    theme: str | None = None,
    sessions_dir: str | None = None,
    out: str | None = None,
    preflight: bool = False,
    force: bool = False,
    allow_read: Sequence[str] = (),
    allow_tools: bool = False,
    allow_tool_writes: bool = False,
) -> int:
    """Run the console; return the process exit code.

    0 decided (or nothing to decide), 2 bad spec/session, 3 ended unresolved,
    130 quit while the debate was still running (the session is saved).
    """
    for label, value in (("spec", spec_path), ("session", resume_path or replay_path)):
        if value and not Path(value).is_file():
            print(clean_line(f"moot: {label} file not found: {value}"), file=sys.stderr)
            return ExitCode.BAD_INPUT
    refused = _terminal_problem(spec_path, resume_path, replay_path)
    if refused:
        print(clean_line(f"moot: {refused}"), file=sys.stderr)
        return ExitCode.BAD_INPUT
    from tui.app.app import MootApp
    from tui.app.gc_policy import tune_for_console

    app = MootApp(
        spec_path=spec_path,
        resume_path=resume_path,
        replay_path=replay_path,
        theme=theme,
        sessions_dir=sessions_dir,
        out=out,
        preflight=preflight,
        force_resume=force,
        allow_read=allow_read,
        allow_tools=allow_tools,
        allow_tool_writes=allow_tool_writes,
    )
    tune_for_console()
    try:
        code = app.run()
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    finally:
        from tui.telemetry import flush  # the last traced turns, if tracing is on

        flush()
    if app.startup_error:
        print(clean_line(f"moot: {app.startup_error}"), file=sys.stderr)
    for line in app.farewell:  # where the session is and how to continue it
        print(clean_line(line), file=sys.stderr)
    if code is None:
        return ExitCode.INTERNAL if app.return_code not in (0, None) else app.exit_code()
    return int(code)


def _terminal_problem(spec: str | None, resume: str | None, replay: str | None) -> str | None:
    """A terminal that cannot draw the console (``TERM=dumb``): refused, with the way round."""
    if os.environ.get("TERM") != "dumb" or os.environ.get("TEXTUAL_DRIVER"):
        return None  # a browser (moot serve's web driver) draws it whatever TERM says
    if spec:
        hint = f"moot run {spec} --headless"
    elif resume:
        hint = f"moot resume {resume} --headless"
    elif replay:
        hint = f"moot export {replay}"
    else:
        hint = "moot run SPEC --headless"
    return f"this terminal (TERM=dumb) cannot show the console; use: {hint}"


def theme_problem(theme: str) -> str | None:
    """``--theme`` names no theme: refused, listing the themes there are (by the command
    line, for every command, a console or not)."""
    from textual.theme import BUILTIN_THEMES

    from tui.app.themes import load_themes, resolve_theme_name

    themes, _ = load_themes(quick=True)
    if resolve_theme_name(theme, themes, set(BUILTIN_THEMES)) is not None:
        return None
    ours = sorted({t.stem for t in themes.values()})
    return (
        f"--theme: unknown theme {theme!r}; moot's themes: {', '.join(ours)}; "
        f"Textual's: {', '.join(sorted(BUILTIN_THEMES))}"
    )
