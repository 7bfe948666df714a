"""An export written next to its session file, as the console's export key does."""

from __future__ import annotations

from pathlib import Path

from tui.engine.basics.safeio import replace_file
from tui.engine.record.session import load_session
from tui.render.adr import to_adr
from tui.render.export import to_json, to_markdown

BESIDE_SUFFIX = {"markdown": ".md", "json": ".json", "adr": ".adr.md"}


def write_beside(session: str | Path, fmt: str) -> Path:
    """Write ``<session>.md``, ``<session>.json`` or ``<session>.adr.md`` next to the session
    file: the text ``moot export --format FMT`` prints for it."""
    data = load_session(session)
    out = Path(session).with_suffix(BESIDE_SUFFIX[fmt])
    if fmt == "adr":
        text = to_adr(data)
    else:
        text = to_markdown(data) if fmt == "markdown" else to_json(data)
    replace_file(out, (text + "\n").encode("utf-8"))  # a planted link is replaced, not followed
    return out
