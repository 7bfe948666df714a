"""Whether a session file is known to be the user's own: what may act on what it records.

A session records its ``[[tools]]`` (commands to run, folders to read) and the
folder they are rooted in. Replaying or verifying a file only reads it; resuming
one starts those tools, and forking one signs them as yours. Both are allowed
when every record is signed, chain intact, by keys the user trusts, or when the
person running moot says ``--allow-tools``.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from tui.engine.errors import MootInputError
from tui.engine.keys import trusted_keys
from tui.engine.session import SessionData


def not_known_yours(data: SessionData) -> str | None:
    """Why the file is not known to be written by keys the user trusts; None if it is."""
    if data.chain or data.signatures.problems:
        return "its hash chain or signatures do not hold"
    if not data.signatures.spans:
        return "it is unsigned"
    try:
        keys, _ = trusted_keys()
    except MootInputError:  # the user's own key is unreadable: no key is known
        keys = []
    known = {k.fingerprint for k in keys}
    strangers = [s.fingerprint for s in data.signatures.spans if s.fingerprint not in known]
    if strangers:
        return f"it is signed by {', '.join(strangers)}, not a key you trust"
    return None


def recorded_tools(data: SessionData) -> list[str]:
    """Each tool the file would start, as what it does: the command it runs, the folder
    it reads. Empty when it starts none (no tools, or no recorded folder to root them)."""
    folder = data.meta.get("spec_folder")
    if not data.spec.tools or not isinstance(folder, str) or not Path(folder).is_absolute():
        return []
    return [
        f"{t.name} runs {shlex.join(t.mcp)}"
        if t.mcp is not None
        else f"{t.name} reads {Path(folder) / (t.root or '')}"
        for t in data.spec.tools
    ]
