"""The first frame of ``moot run SPEC``: the debate's title, at once.

Validating a spec loads pydantic and the engine, and checking the models may
wait on the network; together that is most of a second before the live screen
could draw. This screen needs only the TOML text (``tomllib``), so the title is
on screen as soon as Textual is; the app then does the slow part in a worker
and puts the live screen in its place.
"""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

from textual.app import ComposeResult
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from tui.textsafe import shorten


def quick_title(path: str | Path) -> str:
    """The spec's ``debate.title`` as written (not validated), else the file's name."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        title = raw["debate"]["title"]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError):
        return Path(path).name
    return title if isinstance(title, str) and title.strip() else Path(path).name


class OpeningScreen(Screen[None]):
    """The title and what is happening, until the live screen replaces it."""

    DEFAULT_CSS = """
    OpeningScreen { align: center middle; }
    OpeningScreen > Static { width: auto; max-width: 100%; padding: 0 2; }
    """

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.title_text = quick_title(path)

    def compose(self) -> ComposeResult:
        yield Static(
            Content.assemble(
                (shorten(self.title_text, 200), "bold"),
                ("\nopening the debate: reading the spec, checking the models…", "$text-muted"),
            ),
            markup=False,
        )


def preflight_lines(path: str) -> list[str]:
    """Run off the event loop: ``moot run``'s preflight of the spec's models, one line per
    debater that cannot start; none for a spec that does not validate (opening it says
    why, by key path). Loads the live screen's modules too, off the loop."""
    importlib.import_module("tui.app.screens.live")  # the slow imports, here, not on the loop
    from tui.engine.errors import SpecError
    from tui.engine.spec import read_spec_file

    try:
        spec, _ = read_spec_file(path)
    except SpecError:
        return []
    from tui.providers.preflight import preflight

    return preflight(spec)


def start_problem(path: str, check_models: bool) -> str | None:
    """Why ``moot run`` cannot start (its preflight, unless ``--no-preflight``), or None."""
    if not check_models:
        importlib.import_module("tui.app.screens.live")
        return None
    problems = preflight_lines(path)
    if not problems:
        return None
    return f"{path}: preflight (skip with --no-preflight): " + "; ".join(problems)
