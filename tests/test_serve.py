"""moot serve: the console for a browser audience, behind the optional serve extra."""

from __future__ import annotations

import shlex
import subprocess
import sys

from tui.serve import MISSING, command


def test_each_browser_session_runs_the_console_on_the_same_sessions() -> None:
    parts = shlex.split(command("/srv/moot sessions"))
    assert parts == [sys.executable, "-m", "tui", "--sessions-dir", "/srv/moot sessions"]


def test_without_the_extra_a_clear_message_and_exit_2() -> None:
    hide = (
        "import sys; sys.modules['textual_serve'] = None; "  # as if the extra were not installed
        "from tui.cli import main; raise SystemExit(main(['serve', '--port', '8765']))"
    )
    done = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert MISSING in done.stderr and "Traceback" not in done.stderr
