"""Spec or session file? One given to the wrong command is named, with the command it wants.

A session file handed to ``run`` would otherwise fail as a spec with a list of
unknown keys, and a spec handed to ``replay`` as "no complete record".
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Literal

from tui.engine.basics.bounded import TomlRefused, toml_document
from tui.engine.basics.errors import MootInputError
from tui.engine.basics.safeio import FileRefused, read_regular
from tui.engine.record.fileformat import SCHEMA

Kind = Literal["spec", "session"]
PEEK_LIMIT = 16 * 1024 * 1024  # larger files are left to the command's own checks
_SESSION_SCHEMA = re.compile(
    r"^\s*schema\s*=\s*[\"']" + re.escape(SCHEMA.split("/")[0]) + "/", re.MULTILINE
)


def kind_of(path: str | Path) -> Kind | None:
    """``session`` for a moot session file, ``spec`` for a debate spec, else None."""
    try:
        data = read_regular(path, PEEK_LIMIT)
    except FileRefused:
        return None
    if _SESSION_SCHEMA.search(data[:4096].decode("utf-8-sig", errors="replace")):
        return "session"
    try:  # bounded: a hostile file is left to the command's own checks, never a crash here
        doc = toml_document(data)
    except TomlRefused:
        return None
    if isinstance(doc.get("debate"), dict) and "debaters" in doc and "session" not in doc:
        return "spec"
    return None


def refuse_wrong_kind(path: str, wanted: Kind) -> None:
    """Raise (exit 2) when ``path`` is the other kind of moot file, naming the command to use."""
    found = kind_of(path)
    if found is None or found == wanted:
        return
    quoted = shlex.quote(path)
    if found == "session":
        reason = (
            f"is a session file, not a spec: continue it with `moot resume {quoted}` "
            f"or watch it with `moot replay {quoted}`"
        )
    else:
        reason = f"is a spec, not a session file: run it with `moot run {quoted}`"
    raise MootInputError(path, [reason])
