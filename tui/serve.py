"""``moot serve``: the console in a browser, for an audience, through textual-serve.

textual-serve is an optional extra (``pip install 'moot[serve]'``): each browser
tab gets its own ``moot`` console process, so the audience can open sessions
and replays without touching the operator's terminal.
"""

from __future__ import annotations

import shlex
import sys

from tui.engine.errors import MootInputError
from tui.exitcodes import ExitCode

MISSING = (
    "moot serve needs the optional extra textual-serve: "
    "pip install 'moot[serve]' (or pip install textual-serve)"
)


def command(sessions_dir: str | None) -> str:
    """The console command each browser session runs."""
    parts = [sys.executable, "-m", "tui"]
    if sessions_dir:
        parts += ["--sessions-dir", sessions_dir]
    return shlex.join(parts)


def serve(host: str, port: int, sessions_dir: str | None = None) -> int:
    try:
        from textual_serve.server import Server
    except ImportError:
        raise MootInputError("moot serve", [MISSING]) from None
    Server(command(sessions_dir), host=host, port=port, title="moot").serve()
    return ExitCode.DECIDED
