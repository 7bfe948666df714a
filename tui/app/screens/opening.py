"""The first frame of ``moot run SPEC``: the debate's title, at once.

Validating a spec loads pydantic and the engine, and checking the models may
wait on the network; together that is most of a second before the live screen
could draw. This screen needs only the TOML text, read through the same size,
depth and number limits as any spec (``tui.engine.basics.bounded``, which loads no
pydantic), so the title is on screen as soon as Textual is; the app then does
the slow part in a worker and puts the live screen in its place. A spec past a
limit shows its file name here and is refused there, exit 2, as headless does.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from tui.engine.basics.bounded import SPEC_BYTES, TomlRefused, toml_document
from tui.engine.basics.safeio import FileRefused, read_regular
from tui.render.textsafe import shorten

if TYPE_CHECKING:
    from tui.engine.specs.spec import Spec


def quick_title(path: str | Path) -> str:
    """The spec's ``debate.title`` as written (not validated), else the file's name."""
    try:
        raw = toml_document(read_regular(path, SPEC_BYTES))
        title = raw["debate"]["title"]
    except (FileRefused, TomlRefused, KeyError, TypeError):
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


def _readable_spec(path: str, allow_read: Sequence[str]) -> Spec | None:
    """The spec, or None when it does not validate (opening it reports every problem by
    key path). Loads the live screen's slow imports too: this runs off the event loop."""
    importlib.import_module("tui.app.screens.live")
    from tui.engine.basics.errors import SpecError
    from tui.engine.specs.spec import read_spec_file

    try:
        spec, _ = read_spec_file(path, allow_read)
    except SpecError:
        return None
    return spec


def preflight_lines(path: str, allow_read: Sequence[str] = ()) -> list[str]:
    """``moot run``'s preflight of the spec's models, one line per debater that cannot
    start; none for a spec that does not validate. Run off the event loop."""
    spec = _readable_spec(path, allow_read)
    if spec is None:
        return []
    from tui.providers.preflight import preflight

    return preflight(spec)


def start_check(
    path: str, check_models: bool, allow_read: Sequence[str] = ()
) -> tuple[str | None, list[str]]:
    """Why the debate cannot start (its preflight, unless ``--no-preflight``), or None,
    and (after a preflight that passed) which files go to which servers. Run off the
    event loop, before any session file exists."""
    spec = _readable_spec(path, allow_read)
    if spec is None or not check_models:
        return None, []
    from tui.providers.preflight import document_routes, preflight

    problems = preflight(spec)
    if not problems:
        return None, document_routes(spec)
    return f"{path}: preflight (skip with --no-preflight): " + "; ".join(problems), []
