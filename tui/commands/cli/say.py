"""One line to the user: paths, spec keys and values in it are shown, never obeyed."""

from __future__ import annotations

import sys

from tui.render.textsafe import clean_line


def out(message: str) -> None:
    print(clean_line(message))


def err(message: str) -> None:
    print(clean_line(message), file=sys.stderr)
