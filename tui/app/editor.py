"""A spec opened in the user's ``$EDITOR`` from the console, and checked once it is closed."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path

from textual.app import App, SuspendNotSupported

NO_EDITOR = "EDITOR is not set: set it (for example export EDITOR=nano) to edit specs here"


def editor_command() -> list[str] | None:
    """``$EDITOR`` split as a shell would (``code --wait`` is two words); None when unset."""
    try:
        words = shlex.split(os.environ.get("EDITOR", ""))
    except ValueError:  # an unbalanced quote: not a command
        return None
    return words or None


def edit(app: App[object], path: Path) -> str | None:
    """Hand the terminal to ``$EDITOR`` on ``path`` until it exits; what went wrong, or None."""
    command = editor_command()
    if command is None:
        return NO_EDITOR
    try:
        with app.suspend():
            done = subprocess.run([*command, str(path)], check=False)
    except SuspendNotSupported:
        return "this terminal cannot be handed to an editor (edit the file, then run it)"
    except OSError as err:
        return f"cannot start the editor {command[0]!r}: {err.strerror or err}"
    if done.returncode != 0:
        return f"the editor exited with status {done.returncode}; the spec was not checked"
    return None


def spec_problems(path: Path, allow_read: Sequence[str] = ()) -> list[str]:
    """Every problem of the spec at ``path``, each by its key path; none when it is valid."""
    from tui.engine.basics.errors import SpecError
    from tui.engine.specs.spec import read_spec_file

    try:
        read_spec_file(path, tuple(allow_read))
    except SpecError as err:
        return list(err.problems) or [str(err)]
    return []


def checked(app: App[object], path: Path, allow_read: Sequence[str] = ()) -> bool:
    """Validate the spec at ``path``; when it has problems, show each by its key path."""
    from tui.plural import counted
    from tui.render.textsafe import shorten

    problems = spec_problems(path, allow_read)
    if problems:
        app.notify(
            "\n".join(shorten(p, 300) for p in problems[:12]),
            title=f"{shorten(path.name, 60)}: {counted(len(problems), 'problem')}",
            severity="error",
            markup=False,
            timeout=30,
        )
    return not problems
